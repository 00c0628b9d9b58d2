package extproc

import (
	"encoding/json"
	"net/http"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"

	"github.com/warmroute/warmroute/api"
)

// anthropicError is the error body of Anthropic's Messages API, as vLLM's
// /v1/messages answers: {"type":"error","error":{"type":...,"message":...}}.
type anthropicError struct {
	Type  string               `json:"type"`
	Error anthropicErrorDetail `json:"error"`
}

type anthropicErrorDetail struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// AnthropicErrorType maps an HTTP status to Anthropic's error.type
// vocabulary, as vLLM's translate_error_type does.
func AnthropicErrorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusServiceUnavailable:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

// anthropicErrorBody replaces msg's OpenAI error body with the Anthropic one
// carrying the same message.
func anthropicErrorBody(msg *extprocv3.ProcessingResponse, status int, body api.ErrorResponse) {
	ir := msg.GetImmediateResponse()
	if ir == nil {
		return
	}
	b, err := json.Marshal(anthropicError{Type: "error",
		Error: anthropicErrorDetail{Type: AnthropicErrorType(status), Message: body.Error.Message}})
	if err == nil {
		ir.Body = b
	}
}
