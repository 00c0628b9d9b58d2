package sim

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/warmroute/warmroute/api"
)

// Errors returned by the decoders, the Engine and the fault headers. Every
// error the HTTP layer answers with 400 wraps ErrInvalidRequest; match them
// with errors.Is.
var (
	ErrInvalidRequest = errors.New("invalid request")
	ErrMalformedJSON  = fmt.Errorf("%w: malformed JSON", ErrInvalidRequest)
	ErrMissingModel   = fmt.Errorf("%w: model is required", ErrInvalidRequest)
	ErrEmptyPrompt    = fmt.Errorf("%w: prompt is empty", ErrInvalidRequest)
	ErrBadMaxTokens   = fmt.Errorf("%w: max_tokens must be at least 1", ErrInvalidRequest)
	ErrPromptTooLong  = fmt.Errorf("%w: prompt plus max_tokens exceeds the model's context length", ErrInvalidRequest)
	ErrUnsupported    = fmt.Errorf("%w: unsupported by the simulator", ErrInvalidRequest)
	ErrBadFaultHeader = fmt.Errorf("%w: bad fault injection header", ErrInvalidRequest)

	// ErrUnknownModel means the request names a model this simulator does not serve.
	ErrUnknownModel = errors.New("unknown model")
	// ErrBodyTooLarge means the request body exceeds Options.MaxBodyBytes.
	ErrBodyTooLarge = errors.New("request body too large")
	// ErrInjectedFault is wrapped by the error an x-sim-status header produces.
	ErrInjectedFault = errors.New("injected fault")
	// ErrPrefillFailed is the error an x-sim-fail-prefill header produces
	// after admission; the request stores no blocks.
	ErrPrefillFailed = fmt.Errorf("%w: prefill failed", ErrInjectedFault)
	// ErrCacheInUse means a prefix-cache reset was refused because running
	// requests hold blocks, as vLLM refuses it.
	ErrCacheInUse = errors.New("prefix cache in use")
	// ErrBadEventFormat names an unknown --kv-events-format.
	ErrBadEventFormat = errors.New("unknown kv event format (want map or array)")
	// ErrNoChatTemplate means chat was asked of a tokenizer without a template.
	ErrNoChatTemplate = fmt.Errorf("%w: the tokenizer has no chat template", ErrInvalidRequest)
)

// errClientGone means writing to the client failed: it disconnected.
var errClientGone = errors.New("client went away")

// injectedFault carries the status an x-sim-status header asked for.
type injectedFault struct{ status int }

func (f injectedFault) Error() string {
	return fmt.Sprintf("injected fault: status %d requested by %s", f.status, statusHeader)
}

func (f injectedFault) Is(target error) bool { return target == ErrInjectedFault }

// Outcomes label warmroute_sim_requests_total; the set is closed.
const (
	outcomeOK            = "ok"
	outcomeBadRequest    = "bad_request"
	outcomeUnknownModel  = "unknown_model"
	outcomeTooLarge      = "too_large"
	outcomeInjectedFault = "injected_fault"
	outcomeCancelled     = "cancelled"
	outcomeInternal      = "internal"
	outcomePrefill       = "remote_prefill_failed"
)

// classify is the one place that maps an error to the HTTP status, the OpenAI
// error type and the metrics outcome.
func classify(err error) (status int, errType, outcome string) {
	var fault injectedFault
	var prefill *remotePrefillError
	switch {
	case errors.As(err, &prefill):
		return prefill.status, errTypeFor(prefill.status), outcomePrefill
	case errors.As(err, &fault):
		return fault.status, errTypeFor(fault.status), outcomeInjectedFault
	case errors.Is(err, ErrPrefillFailed):
		return http.StatusInternalServerError, api.ErrTypeInternal, outcomeInjectedFault
	case errors.Is(err, ErrInvalidRequest):
		return http.StatusBadRequest, api.ErrTypeInvalidRequest, outcomeBadRequest
	case errors.Is(err, ErrUnknownModel):
		return http.StatusNotFound, api.ErrTypeNotFound, outcomeUnknownModel
	case errors.Is(err, ErrBodyTooLarge):
		return http.StatusRequestEntityTooLarge, api.ErrTypeTooLarge, outcomeTooLarge
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, errClientGone):
		// The client is gone or the server is shutting down; the body is
		// rarely read, but the status should still say "try elsewhere".
		return http.StatusServiceUnavailable, api.ErrTypeUnavailable, outcomeCancelled
	}
	return http.StatusInternalServerError, api.ErrTypeInternal, outcomeInternal
}

func errTypeFor(status int) string {
	switch {
	case status == http.StatusNotFound:
		return api.ErrTypeNotFound
	case status == http.StatusRequestEntityTooLarge:
		return api.ErrTypeTooLarge
	case status == http.StatusServiceUnavailable:
		return api.ErrTypeUnavailable
	case status < 500:
		return api.ErrTypeInvalidRequest
	}
	return api.ErrTypeInternal
}
