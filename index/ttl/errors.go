package ttl

import (
	"errors"

	"github.com/warmroute/warmroute/api"
)

// Errors returned by the package. Callers match them with errors.Is.
var (
	// ErrOptions means Options failed validation.
	ErrOptions = api.ErrTTLConfig
	// ErrPercentile means a latency percentile is not "max" or "pNN" with
	// NN in (0, 100].
	ErrPercentile = api.ErrPercentile
	// ErrFormat means the admin endpoint was asked for a format it does not
	// speak.
	ErrFormat = errors.New("unsupported report format")
)
