package relay

import "errors"

// Sentinel errors. Callers match them with errors.Is; the wrapping error
// carries the context.
var (
	// ErrReplayUnavailable reports that the engine's replay socket could not
	// serve the requested range (not configured, timed out, or the range is gone).
	ErrReplayUnavailable = errors.New("replay range unavailable")
	// ErrInvalidConfig reports a relay option that cannot work.
	ErrInvalidConfig = errors.New("invalid relay configuration")
)
