package index

import (
	"errors"
	"fmt"
	"math/bits"
	"time"
)

// Defaults used when an Options field is zero.
const (
	DefaultBlockSize = 16
	DefaultMaxBytes  = 1 << 30
	DefaultShards    = 64
	// MaxRank is the highest data-parallel rank accepted; a holder id packs
	// the rank into 8 bits beside the endpoint.
	MaxRank = 255
	// maxEndpoints bounds interned endpoints to the 24 bits a holder id
	// keeps, less one: the last id with rank MaxRank would be the all-ones
	// holder id, and an inline entry stores its holder id plus one.
	maxEndpoints = 1<<24 - 1
)

// Options configures an Index. The zero value means every default.
type Options struct {
	// BlockSize is the engines' KV block size in tokens; events with another
	// block size are rejected (they could never match). Default 16.
	BlockSize int
	// MaxBytes bounds the index's estimated memory. When exceeded, the least
	// recently useful keys are evicted. Default 1 GiB.
	MaxBytes int64
	// Shards is the number of independently locked shards, rounded up to a
	// power of two. Default 64.
	Shards int
	// Grace keeps expired speculative entries, unmatchable, so a confirmation
	// arriving after expiry is reported as EarlyExpiry rather than lost.
	// Zero means expired entries end as StaleExpiry at once.
	Grace time.Duration
	// Weights values confirmed blocks per medium in Match.Weighted. The zero
	// value means DefaultWeights.
	Weights Weights
	// Observer receives speculative outcomes. Nil discards them.
	Observer Observer
	// Metrics, from NewMetrics, exports the index's stats. Nil exports none.
	Metrics *Metrics
	// Now is the clock, injectable so tests control expiry. Default time.Now.
	Now func() time.Time
}

// WithDefaults returns a copy of o with every zero field set to its default.
func (o Options) WithDefaults() Options {
	if o.BlockSize == 0 {
		o.BlockSize = DefaultBlockSize
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Shards == 0 {
		o.Shards = DefaultShards
	}
	if o.Shards > 0 {
		o.Shards = 1 << bits.Len(uint(o.Shards-1))
	}
	if o.Weights == (Weights{}) {
		o.Weights = DefaultWeights
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Validate reports every problem in o, joined and wrapping ErrOptions, or nil.
func (o Options) Validate() error {
	var errs []error
	if o.BlockSize < 0 || o.BlockSize > maxBlockSize {
		errs = append(errs, fmt.Errorf("block size must be 1-%d, got %d", maxBlockSize, o.BlockSize))
	}
	if o.MaxBytes < 0 {
		errs = append(errs, fmt.Errorf("max bytes must not be negative, got %d", o.MaxBytes))
	}
	if o.Shards < 0 || o.Shards > 1<<16 {
		errs = append(errs, fmt.Errorf("shards must be 1-65536, got %d", o.Shards))
	}
	if o.Grace < 0 {
		errs = append(errs, fmt.Errorf("grace must not be negative, got %s", o.Grace))
	}
	for m, w := range o.Weights {
		if !(w >= 0 && w <= 1) {
			errs = append(errs, fmt.Errorf("weight for %s must be within [0, 1], got %g", Medium(m), w))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrOptions, errors.Join(errs...))
}
