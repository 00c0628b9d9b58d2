package api

import (
	"fmt"
	"time"
)

// IndexConfig sizes the prefix index. A zero field means its default.
type IndexConfig struct {
	// MaxBytes bounds the index's estimated memory. Default 1 GiB.
	MaxBytes int64 `json:"maxBytes,omitempty"`
	// BlockSize is the engines' KV block size in tokens; every pool that
	// routes on prefixes must use it. Default 16.
	BlockSize int `json:"blockSize,omitempty"`
	// Grace keeps expired speculative entries, unmatchable, so a late
	// confirmation is reported as late rather than lost. Default 10s.
	Grace Duration `json:"grace,omitempty"`
	// SweepInterval is how often expired predictions are ended on quiet
	// shards. Default 100ms.
	SweepInterval Duration `json:"sweepInterval,omitempty"`
}

// Defaults of IndexConfig.
const (
	DefaultIndexMaxBytes      = 1 << 30
	DefaultBlockSize          = 16
	DefaultIndexGrace         = 10 * time.Second
	DefaultIndexSweepInterval = 100 * time.Millisecond
)

// WithDefaults returns a copy of c with every zero field set to its default.
func (c IndexConfig) WithDefaults() IndexConfig {
	if c.MaxBytes == 0 {
		c.MaxBytes = DefaultIndexMaxBytes
	}
	if c.BlockSize == 0 {
		c.BlockSize = DefaultBlockSize
	}
	if c.Grace == 0 {
		c.Grace = Duration(DefaultIndexGrace)
	}
	if c.SweepInterval == 0 {
		c.SweepInterval = Duration(DefaultIndexSweepInterval)
	}
	return c
}

// Tokenizer modes of TokenizerConfig.Mode.
const (
	// TokenizerLocal encodes in process from the pool's tokenizer files.
	TokenizerLocal = "local"
	// TokenizerRemote asks one of the pool's engines (POST /tokenize).
	TokenizerRemote = "remote"
	// TokenizerDrift encodes locally and compares a sample of requests with
	// the engine's /tokenize, off the request path.
	TokenizerDrift = "drift"
)

// TokenizerConfig says how a pool turns prompts into token ids. A pool
// without one routes on load alone.
type TokenizerConfig struct {
	// Dir holds the model's tokenizer.json and tokenizer_config.json.
	// Required for local and drift modes.
	Dir string `json:"dir,omitempty"`
	// Mode is local (default), remote or drift.
	Mode string `json:"mode,omitempty"`
	// DriftSampleRate is the fraction (0..1] of requests compared in drift
	// mode. Default 0.01.
	DriftSampleRate float64 `json:"driftSampleRate,omitempty"`
	// RemoteTimeout bounds one /tokenize call. Default 500ms.
	RemoteTimeout Duration `json:"remoteTimeout,omitempty"`
}

// Enabled reports whether the pool routes on prefixes.
func (c TokenizerConfig) Enabled() bool { return c.Dir != "" || c.Mode == TokenizerRemote }

// Defaults of TokenizerConfig.
const (
	DefaultDriftSampleRate = 0.01
	DefaultRemoteTimeout   = 500 * time.Millisecond
)

// WithDefaults returns a copy of c with every zero field set to its default.
func (c TokenizerConfig) WithDefaults() TokenizerConfig {
	if c.Mode == "" {
		c.Mode = TokenizerLocal
	}
	if c.DriftSampleRate == 0 {
		c.DriftSampleRate = DefaultDriftSampleRate
	}
	if c.RemoteTimeout == 0 {
		c.RemoteTimeout = Duration(DefaultRemoteTimeout)
	}
	return c
}

func (c TokenizerConfig) validate() []error {
	var errs []error
	switch c.Mode {
	case "", TokenizerLocal, TokenizerDrift:
		if c.Dir == "" && c.Mode != "" {
			errs = append(errs, fmt.Errorf("tokenizer mode %q needs dir", c.Mode))
		}
	case TokenizerRemote:
	default:
		errs = append(errs, fmt.Errorf("tokenizer mode %q: want local, remote or drift", c.Mode))
	}
	if c.DriftSampleRate < 0 || c.DriftSampleRate > 1 {
		errs = append(errs, fmt.Errorf("tokenizer driftSampleRate must be within [0,1], got %g", c.DriftSampleRate))
	}
	if c.RemoteTimeout < 0 {
		errs = append(errs, fmt.Errorf("tokenizer remoteTimeout must not be negative, got %s", c.RemoteTimeout.D()))
	}
	return errs
}

// ScoringConfig weighs the scorers and tunes anti-herding. Fields are
// pointers so a pool can override some of them and inherit the rest, and so
// an explicit 0 differs from "unset"; see Merge and WithDefaults.
type ScoringConfig struct {
	// PrefixWeight weighs the cached-prefix score. Default 1.
	PrefixWeight *float64 `json:"prefixWeight,omitempty"`
	// LoadWeight weighs router-tracked load (in-flight requests and queued
	// prefill tokens). Default 0.5.
	LoadWeight *float64 `json:"loadWeight,omitempty"`
	// EngineLoadWeight weighs the engines' own gauges (queue, KV usage) when
	// relays report them. Default 0.3.
	EngineLoadWeight *float64 `json:"engineLoadWeight,omitempty"`
	// HerdMargin is how many more in-flight requests than the least-loaded
	// candidate an endpoint may carry before its prefix score is discounted;
	// at twice the margin the prefix no longer counts. Default 4.
	HerdMargin *float64 `json:"herdMargin,omitempty"`
	// TieEpsilon makes candidates within this much of the best score
	// equivalent; one of them is chosen at random. Default 0.02.
	TieEpsilon *float64 `json:"tieEpsilon,omitempty"`
}

// Defaults of ScoringConfig.
const (
	DefaultPrefixWeight     = 1.0
	DefaultLoadWeight       = 0.5
	DefaultEngineLoadWeight = 0.3
	DefaultHerdMargin       = 4.0
	DefaultTieEpsilon       = 0.02
)

// Merge returns c with every field that over sets replaced by over's.
func (c ScoringConfig) Merge(over *ScoringConfig) ScoringConfig {
	if over == nil {
		return c
	}
	pick := func(a, b *float64) *float64 {
		if b != nil {
			return b
		}
		return a
	}
	c.PrefixWeight = pick(c.PrefixWeight, over.PrefixWeight)
	c.LoadWeight = pick(c.LoadWeight, over.LoadWeight)
	c.EngineLoadWeight = pick(c.EngineLoadWeight, over.EngineLoadWeight)
	c.HerdMargin = pick(c.HerdMargin, over.HerdMargin)
	c.TieEpsilon = pick(c.TieEpsilon, over.TieEpsilon)
	return c
}

// WithDefaults returns a copy of c with every unset field set to its default.
func (c ScoringConfig) WithDefaults() ScoringConfig {
	return ScoringConfig{
		PrefixWeight:     Float(DefaultPrefixWeight),
		LoadWeight:       Float(DefaultLoadWeight),
		EngineLoadWeight: Float(DefaultEngineLoadWeight),
		HerdMargin:       Float(DefaultHerdMargin),
		TieEpsilon:       Float(DefaultTieEpsilon),
	}.Merge(&c)
}

// Float returns a pointer to v, for ScoringConfig literals.
func Float(v float64) *float64 { return &v }

func (c *ScoringConfig) validate() []error {
	if c == nil {
		return nil
	}
	var errs []error
	check := func(name string, v *float64) {
		if v != nil && (*v < 0 || *v != *v) {
			errs = append(errs, fmt.Errorf("scoring %s must be a non-negative number, got %g", name, *v))
		}
	}
	check("prefixWeight", c.PrefixWeight)
	check("loadWeight", c.LoadWeight)
	check("engineLoadWeight", c.EngineLoadWeight)
	check("herdMargin", c.HerdMargin)
	check("tieEpsilon", c.TieEpsilon)
	return errs
}

// validateRouting checks the index, scoring and per-pool prefix settings.
func validateRouting(c ServeConfig) []error {
	var errs []error
	if c.Index.MaxBytes < 0 || c.Index.BlockSize < 0 || c.Index.Grace < 0 || c.Index.SweepInterval < 0 {
		errs = append(errs, fmt.Errorf("index: maxBytes, blockSize, grace and sweepInterval must not be negative"))
	}
	errs = append(errs, c.Scoring.validate()...)
	blockSize := c.Index.WithDefaults().BlockSize
	for i, p := range c.Pools {
		for _, err := range p.Tokenizer.validate() {
			errs = append(errs, fmt.Errorf("pools[%d] %q: %w", i, p.Name, err))
		}
		for _, err := range p.Scoring.validate() {
			errs = append(errs, fmt.Errorf("pools[%d] %q: %w", i, p.Name, err))
		}
		if p.BlockSize != 0 && p.BlockSize != blockSize {
			// One index keys every pool; blocks of another size could never
			// match the engines' events.
			errs = append(errs, fmt.Errorf("pools[%d] %q: blockSize %d differs from index.blockSize %d", i, p.Name, p.BlockSize, blockSize))
		}
	}
	return errs
}
