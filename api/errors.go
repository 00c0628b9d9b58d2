package api

// ErrorResponse is the OpenAI-compatible error body returned to clients when the
// router rejects a request.
type ErrorResponse struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the inner object of ErrorResponse.
type ErrorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    int     `json:"code"`
}

// Error types used in ErrorDetail.Type, following OpenAI's vocabulary.
const (
	ErrTypeInvalidRequest = "invalid_request_error"
	ErrTypeNotFound       = "not_found_error"
	ErrTypeTooLarge       = "request_too_large"
	ErrTypeUnavailable    = "service_unavailable"
	ErrTypeRateLimit      = "rate_limit_error"
	ErrTypeInternal       = "internal_error"
)
