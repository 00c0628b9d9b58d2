package envoy

import "errors"

var (
	// ErrUnknownTemplate reports a Template that is not one of Templates().
	ErrUnknownTemplate = errors.New("unknown envoy template")
	// ErrInvalidParams reports Params that cannot make a valid configuration.
	ErrInvalidParams = errors.New("invalid envoy template parameters")
)
