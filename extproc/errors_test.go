package extproc

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/scorer"
)

func TestErrorReply(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		status    int
		typ       string
		param     string // "" means no param
		outcome   outcome
		hidesText bool // the message must not reveal err's text
	}{
		{"malformed", fmt.Errorf("%w: x", ErrMalformedJSON), 400, api.ErrTypeInvalidRequest, "", outcomeBadRequest, false},
		{"missing model", &fieldError{"model", ErrMissingModel}, 400, api.ErrTypeInvalidRequest, "model", outcomeBadRequest, false},
		{"empty prompt", &fieldError{"prompt", ErrEmptyPrompt}, 400, api.ErrTypeInvalidRequest, "prompt", outcomeBadRequest, false},
		{"empty messages", &fieldError{"messages", ErrEmptyMessages}, 400, api.ErrTypeInvalidRequest, "messages", outcomeBadRequest, false},
		{"wrong type", wrongType("stream", "a boolean"), 400, api.ErrTypeInvalidRequest, "stream", outcomeBadRequest, false},
		{"unknown model", fmt.Errorf("model %q: %w", "x", scorer.ErrUnknownModel), 404, api.ErrTypeNotFound, "", outcomeUnknownModel, false},
		{"too large", fmt.Errorf("%w: 9 bytes", ErrBodyTooLarge), 413, api.ErrTypeTooLarge, "", outcomeTooLarge, false},
		{"no endpoint", fmt.Errorf("pool: %w", scorer.ErrNoEndpoint), 503, api.ErrTypeUnavailable, "", outcomeNoEndpoint, false},
		{"nil decision", errNilDecision, 500, api.ErrTypeInternal, "", outcomeInternal, true},
		{"context", context.Canceled, 500, api.ErrTypeInternal, "", outcomeInternal, true},
		{"anything else", errors.New("disk on fire"), 500, api.ErrTypeInternal, "", outcomeInternal, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, body := errorReply(tc.err)
			if status != tc.status || body.Error.Code != tc.status || body.Error.Type != tc.typ {
				t.Fatalf("errorReply = %d %+v, want %d type %s", status, body, tc.status, tc.typ)
			}
			if got := outcomeOf(status); got != tc.outcome {
				t.Errorf("outcome = %v, want %v", got, tc.outcome)
			}
			gotParam := ""
			if body.Error.Param != nil {
				gotParam = *body.Error.Param
			}
			if gotParam != tc.param {
				t.Errorf("param = %q, want %q", gotParam, tc.param)
			}
			if tc.hidesText && body.Error.Message == tc.err.Error() {
				t.Errorf("internal error text leaked to the client: %q", body.Error.Message)
			}
			if !tc.hidesText && body.Error.Message != tc.err.Error() {
				t.Errorf("message = %q, want %q", body.Error.Message, tc.err.Error())
			}
		})
	}
}
