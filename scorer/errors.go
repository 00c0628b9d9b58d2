package scorer

import "errors"

// Errors returned by Pick. Callers match them with errors.Is.
var (
	// ErrUnknownModel means no pool serves the request's model and no default
	// pool is configured.
	ErrUnknownModel = errors.New("unknown model")
	// ErrNoEndpoint means the pool (after the subset hint) has no eligible endpoint.
	ErrNoEndpoint = errors.New("no eligible endpoint")
)
