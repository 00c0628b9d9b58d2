package subscriber

import "errors"

// Sentinel errors. Callers match them with errors.Is; the wrapping error
// carries the context (which subject, which endpoint).
var (
	// ErrBadSubject reports a NATS subject or header that does not follow the
	// api scheme.
	ErrBadSubject = errors.New("malformed event subject or header")
	// ErrInvalidConfig reports a subscriber option that cannot work.
	ErrInvalidConfig = errors.New("invalid subscriber configuration")
)
