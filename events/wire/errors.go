package wire

import "errors"

// Sentinel errors. Callers match them with errors.Is; the wrapping error
// carries the context (which field, which event).
var (
	// ErrMalformed reports a payload that is not a well-formed engine batch:
	// truncated msgpack, a wrong type where the schema fixes one, or a length
	// that cannot fit in the remaining bytes.
	ErrMalformed = errors.New("malformed kv event payload")
	// ErrTooDeep reports msgpack nesting beyond maxDepth in a value that is
	// being skipped.
	ErrTooDeep = errors.New("msgpack nesting too deep")
)
