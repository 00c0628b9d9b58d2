package extproc

import (
	"errors"
	"net/http"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/scorer"
)

// Errors returned by ParseRequest and seen by clients as 400 Bad Request.
// Callers match them with errors.Is.
var (
	// ErrMalformedJSON means the body is not a JSON object.
	ErrMalformedJSON = errors.New("malformed JSON body")
	// ErrMissingModel means "model" is absent, null, empty or not a string.
	ErrMissingModel = errors.New("model must be a non-empty string")
	// ErrEmptyPrompt means a completion's prompt (or one of its entries) is
	// absent or empty.
	ErrEmptyPrompt = errors.New("prompt must not be empty")
	// ErrEmptyMessages means a chat request has no messages.
	ErrEmptyMessages = errors.New("messages must not be empty")
	// ErrWrongType means a known field holds a JSON value of the wrong type.
	ErrWrongType = errors.New("wrong type")
	// ErrInvalidValue means a field is well typed but refused by the engine's
	// own validation (such as a tool change naming an undeclared tool).
	ErrInvalidValue = errors.New("invalid value")
)

// ErrBodyTooLarge means the request body exceeds Options.MaxBodyBytes; the
// client sees 413.
var ErrBodyTooLarge = errors.New("request body too large")

// ErrOverloaded means the request bodies held by all streams would exceed
// Config.MaxBufferedBytes; the client sees 503 and may retry.
var ErrOverloaded = errors.New("router is holding too many request bodies")

// errNilDecision guards against a Picker that returns neither a decision nor
// an error.
var errNilDecision = errors.New("picker returned no decision and no error")

// badRequest lists the sentinels that mean the client sent something invalid.
var badRequest = []error{ErrMalformedJSON, ErrMissingModel, ErrEmptyPrompt, ErrEmptyMessages, ErrWrongType, ErrInvalidValue}

// fieldError names the request field an error is about, so the OpenAI error
// body can carry it as "param".
type fieldError struct {
	field string
	err   error
}

func (e *fieldError) Error() string { return e.err.Error() }
func (e *fieldError) Unwrap() error { return e.err }

// errorReply maps any error to the HTTP status and OpenAI error body the
// client receives. It is the one place where routing errors meet status codes.
func errorReply(err error) (int, api.ErrorResponse) {
	status, typ := http.StatusInternalServerError, api.ErrTypeInternal
	msg := "internal error in the router"
	switch {
	case isBadRequest(err):
		status, typ, msg = http.StatusBadRequest, api.ErrTypeInvalidRequest, err.Error()
	case errors.Is(err, scorer.ErrUnknownModel):
		status, typ, msg = http.StatusNotFound, api.ErrTypeNotFound, err.Error()
	case errors.Is(err, ErrBodyTooLarge):
		status, typ, msg = http.StatusRequestEntityTooLarge, api.ErrTypeTooLarge, err.Error()
	case errors.Is(err, ErrOverloaded):
		status, typ, msg = http.StatusServiceUnavailable, api.ErrTypeUnavailable, err.Error()
	case errors.Is(err, scorer.ErrResponseNotFound):
		// vLLM's own answer for an unknown previous_response_id.
		status, typ, msg = http.StatusNotFound, api.ErrTypeInvalidRequest, err.Error()
	case errors.Is(err, scorer.ErrSaturated):
		status, typ, msg = http.StatusTooManyRequests, api.ErrTypeRateLimit, err.Error()
	case errors.Is(err, scorer.ErrNoEndpoint):
		status, typ, msg = http.StatusServiceUnavailable, api.ErrTypeUnavailable, err.Error()
	}
	body := api.ErrorResponse{Error: api.ErrorDetail{Message: msg, Type: typ, Code: status}}
	var fe *fieldError
	if status == http.StatusBadRequest && errors.As(err, &fe) {
		body.Error.Param = &fe.field
	}
	if errors.Is(err, scorer.ErrResponseNotFound) {
		param := "response_id"
		body.Error.Param = &param
	}
	return status, body
}

func isBadRequest(err error) bool {
	for _, s := range badRequest {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}
