package index

import (
	"fmt"
	"time"

	"github.com/warmroute/warmroute/api"
)

// Config is the `index` section of the router's configuration file. The
// zero value means every default.
type Config struct {
	// MaxBytes bounds the index's estimated memory. Default 1 GiB.
	MaxBytes int64 `json:"maxBytes,omitempty"`
	// BlockSize is the engines' KV block size in tokens; every pool that
	// routes on prefixes keys its prompts with it. Default 16.
	BlockSize int `json:"blockSize,omitempty"`
	// Grace keeps expired speculative entries, unmatchable, so a late
	// confirmation is reported as late rather than lost. Default 10s.
	Grace api.Duration `json:"grace,omitempty"`
}

// DefaultGrace is the default Config.Grace.
const DefaultGrace = 10 * time.Second

// WithDefaults returns a copy of c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.MaxBytes == 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.BlockSize == 0 {
		c.BlockSize = DefaultBlockSize
	}
	if c.Grace == 0 {
		c.Grace = api.Duration(DefaultGrace)
	}
	return c
}

// Validate reports every problem in c, or nil.
func (c Config) Validate() error {
	if c.MaxBytes < 0 || c.BlockSize < 0 || c.Grace < 0 {
		return fmt.Errorf("index: maxBytes, blockSize and grace must not be negative")
	}
	if c.BlockSize > maxBlockSize {
		return fmt.Errorf("index: blockSize must be 1-%d, got %d", maxBlockSize, c.BlockSize)
	}
	return nil
}

// Options returns the index Options for c with defaults applied; the caller
// adds the parts that are not file settings (Observer, Now).
func (c Config) Options() Options {
	c = c.WithDefaults()
	return Options{BlockSize: c.BlockSize, MaxBytes: c.MaxBytes, Grace: c.Grace.D()}
}
