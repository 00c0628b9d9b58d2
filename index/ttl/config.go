package ttl

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/warmroute/warmroute/api"
)

// Mode is how the controller sets the TTL.
type Mode string

// Modes. The zero value means ModeStatic.
const (
	// ModeStatic gives every endpoint Config.Static; the advisor still
	// measures, so switching to advise shows what it would say.
	ModeStatic Mode = "static"
	// ModeAdvise computes and exports advice; the TTL stays static.
	ModeAdvise Mode = "advise"
	// ModeAdaptive moves each TTL towards its advice, slowly and within
	// [Jitter, MaxStale].
	ModeAdaptive Mode = "adaptive"
)

// Config is the `ttl` section of the router's configuration file: the
// settings an operator chooses. A zero field means its default. Everything
// else the controller needs is derived from these (see Options for the
// derivations) or bounded by fixed limits (Limits).
type Config struct {
	// Mode is static, advise or adaptive. Default static.
	Mode Mode `json:"mode,omitempty"`
	// Static is the TTL in static and advise modes and the starting TTL in
	// adaptive mode. Default 2s, the documented llm-d default.
	Static api.Duration `json:"static,omitempty"`
	// Percentile of route-to-confirmation latency the TTL covers: "p95",
	// "p99" or "max" (any pNN is accepted). Default p99.
	Percentile string `json:"percentile,omitempty"`
	// Jitter (J's fixed part) is slack for scheduling jitter and timing
	// resolution, added to the percentile together with the observed
	// subscriber backlog. It is also the adaptive floor (advice is never
	// below it) and the adaptive dead band. Default 100ms.
	Jitter api.Duration `json:"jitter,omitempty"`
	// MaxStale caps the TTL: the longest a failed prediction may steer
	// routing. Default 5s.
	MaxStale api.Duration `json:"maxStale,omitempty"`
	// MinSamples is how many confirmations (for advice) or resolved blocks
	// (for trust) a window needs before it is believed. Default 100.
	MinSamples int `json:"minSamples,omitempty"`
	// Interval is how often advice is recomputed and, in adaptive mode, the
	// TTL moved. Advice looks back windowIntervals intervals. Default 10s.
	Interval api.Duration `json:"interval,omitempty"`
	// Step bounds one adaptive move. Default 100ms.
	Step api.Duration `json:"step,omitempty"`
}

// Defaults used when a Config field is zero.
const (
	DefaultStatic     = 2 * time.Second
	DefaultPercentile = "p99"
	DefaultJitter     = 100 * time.Millisecond
	DefaultMaxStale   = 5 * time.Second
	DefaultMinSamples = 100
	DefaultInterval   = 10 * time.Second
	DefaultStep       = 100 * time.Millisecond
)

// windowIntervals is how many recompute intervals advice, trust and
// exposure look back: 5 minutes at the default interval. Tying the window to
// the interval keeps one knob for "how fast does the controller follow".
const windowIntervals = 30

// Resolution rounds advice up to a multiple of itself, after the arithmetic:
// finer than any event path, coarse enough to keep the TTL readable.
const Resolution = 10 * time.Millisecond

// WithDefaults returns a copy of c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	setDuration(&c.Static, DefaultStatic)
	setDuration(&c.Jitter, DefaultJitter)
	setDuration(&c.MaxStale, DefaultMaxStale)
	setDuration(&c.Interval, DefaultInterval)
	setDuration(&c.Step, DefaultStep)
	if c.MinSamples == 0 {
		c.MinSamples = DefaultMinSamples
	}
	if c.Mode == "" {
		c.Mode = ModeStatic
	}
	if c.Percentile == "" {
		c.Percentile = DefaultPercentile
	}
	return c
}

func setDuration(d *api.Duration, def time.Duration) {
	if *d == 0 {
		*d = api.Duration(def)
	}
}

// Validate reports every problem in c (after defaults), joined and wrapping
// ErrOptions, or nil.
func (c Config) Validate() error {
	c = c.WithDefaults()
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	switch c.Mode {
	case ModeStatic, ModeAdvise, ModeAdaptive:
	default:
		bad("mode must be static, advise or adaptive, got %q", c.Mode)
	}
	if _, err := ParsePercentile(c.Percentile); err != nil {
		errs = append(errs, err)
	}
	for _, d := range []struct {
		name string
		v    api.Duration
	}{{"static", c.Static}, {"jitter", c.Jitter}, {"maxStale", c.MaxStale},
		{"interval", c.Interval}, {"step", c.Step}} {
		if d.v < 0 {
			bad("%s must not be negative, got %s", d.name, d.v.D())
		}
	}
	if c.Static > c.MaxStale {
		bad("want static <= maxStale, got %s, %s", c.Static.D(), c.MaxStale.D())
	}
	if c.Mode == ModeAdaptive && c.Jitter > c.MaxStale {
		bad("adaptive mode needs jitter (its floor) <= maxStale, got %s, %s", c.Jitter.D(), c.MaxStale.D())
	}
	if c.MinSamples < 0 {
		bad("minSamples must not be negative, got %d", c.MinSamples)
	}
	if c.MinSamples > DefaultWindowSamples {
		bad("minSamples (%d) must not exceed the %d latencies a window keeps, or advice could never be ready",
			c.MinSamples, DefaultWindowSamples)
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("validating ttl config: %w", errors.Join(append([]error{ErrOptions}, errs...)...))
}

// ParsePercentile reads "p95", "p99", "p99.9" or "max" (case-insensitive).
func ParsePercentile(s string) (Percentile, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "max" {
		return 1, nil
	}
	num, ok := strings.CutPrefix(t, "p")
	if !ok {
		return 0, fmt.Errorf("parsing percentile %q: want \"max\" or \"pNN\": %w", s, ErrPercentile)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || strings.ContainsAny(num, "eEnNxX_+-") || math.IsNaN(v) {
		return 0, fmt.Errorf("parsing percentile %q: %q is not a plain number: %w", s, num, ErrPercentile)
	}
	if !(v > 0 && v <= 100) {
		return 0, fmt.Errorf("parsing percentile %q: want 0 < NN <= 100: %w", s, ErrPercentile)
	}
	return Percentile(v / 100), nil
}

// MarshalText and UnmarshalText let flag.TextVar bind a Mode; Validate
// judges the value.
func (m Mode) MarshalText() ([]byte, error) { return []byte(m), nil }

// UnmarshalText sets m to the text as given.
func (m *Mode) UnmarshalText(b []byte) error { *m = Mode(b); return nil }
