package ttl

import "errors"

// Errors returned by the package. Callers match them with errors.Is.
var (
	// ErrOptions means Options failed validation.
	ErrOptions = errors.New("invalid ttl options")
	// ErrPercentile means a latency percentile is not "max" or "pNN" with
	// NN in (0, 100].
	ErrPercentile = errors.New("unusable latency percentile")
	// ErrFormat means the admin endpoint was asked for a format it does not
	// speak.
	ErrFormat = errors.New("unsupported report format")
)
