package events

import "errors"

// Sentinel errors. Callers match them with errors.Is; the wrapping error
// carries the context (which field, which event, which endpoint).
var (
	// ErrMalformed reports a payload that is not a well-formed engine batch:
	// truncated msgpack, a wrong type where the schema fixes one, or a length
	// that cannot fit in the remaining bytes.
	ErrMalformed = errors.New("malformed kv event payload")
	// ErrTooDeep reports msgpack nesting beyond maxDepth in a value that is
	// being skipped.
	ErrTooDeep = errors.New("msgpack nesting too deep")
	// ErrBadSubject reports a NATS subject or header that does not follow the
	// api scheme.
	ErrBadSubject = errors.New("malformed event subject or header")
	// ErrReplayUnavailable reports that the engine's replay socket could not
	// serve the requested range (not configured, timed out, or the range is gone).
	ErrReplayUnavailable = errors.New("replay range unavailable")
	// ErrInvalidConfig reports a relay or subscriber option that cannot work.
	ErrInvalidConfig = errors.New("invalid events configuration")
)
