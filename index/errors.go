package index

import "errors"

// Errors returned by the index. Callers match them with errors.Is.
var (
	// ErrBlockSize means a block size is out of range or differs from the
	// index's configured one, so keys could never match.
	ErrBlockSize = errors.New("unusable block size")
	// ErrTokenRange means a token id is negative or does not fit in 32 bits.
	ErrTokenRange = errors.New("token id out of range")
	// ErrEndpoint means an event or call named no endpoint.
	ErrEndpoint = errors.New("missing endpoint")
	// ErrRank means a data-parallel rank is negative or above MaxRank.
	ErrRank = errors.New("data-parallel rank out of range")
	// ErrOptions means the Options failed validation.
	ErrOptions = errors.New("invalid index options")
	// ErrMetricsInUse means Options.Metrics already serves another index.
	ErrMetricsInUse = errors.New("metrics already bound to another index")
)
