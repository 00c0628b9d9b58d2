package ttl

import (
	"math"
	"slices"
	"strconv"
	"time"
)

// Percentile is the share of route-to-confirmation latencies the TTL should
// cover, in (0, 1]; 1 means the maximum. The zero value is not valid; parse
// one with ParsePercentile.
type Percentile float64

// String writes the percentile as ParsePercentile reads it.
func (p Percentile) String() string {
	if p >= 1 {
		return "max"
	}
	return "p" + strconv.FormatFloat(float64(p)*100, 'f', -1, 64)
}

// quantile returns the nearest-rank p-quantile of samples, sorting them in
// place: the smallest sample with at least p of all samples at or below it.
// Nearest rank always returns an observed latency, never an interpolation
// between two, so "p99 covers 99% of confirmations" holds exactly for the
// window. It returns 0 for no samples.
func quantile(samples []time.Duration, p Percentile) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	slices.Sort(samples)
	rank := int(math.Ceil(float64(p)*float64(len(samples)) - 1e-9))
	rank = min(max(rank, 1), len(samples))
	return samples[rank-1]
}
