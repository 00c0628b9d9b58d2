package api

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Errors about TTL configuration. Callers match them with errors.Is.
var (
	// ErrTTLConfig means a TTLConfig failed validation.
	ErrTTLConfig = errors.New("invalid ttl options")
	// ErrPercentile means a latency percentile is not "max" or "pNN" with
	// NN in (0, 100].
	ErrPercentile = errors.New("unusable latency percentile")
)

// ParsePercentile reads "p95", "p99", "p99.9" or "max" (case-insensitive) as
// a share in (0, 1]; 1 means the maximum.
func ParsePercentile(s string) (float64, error) {
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
	return v / 100, nil
}

// TTLMode is how the controller sets the TTL.
type TTLMode string

// Modes. The zero value means TTLModeStatic.
const (
	// TTLModeStatic gives every endpoint Config.Static; the advisor still
	// measures, so switching to advise shows what it would say.
	TTLModeStatic TTLMode = "static"
	// TTLModeAdvise computes and exports advice; the TTL stays static.
	TTLModeAdvise TTLMode = "advise"
	// TTLModeAdaptive moves each TTL towards its advice, slowly and within
	// [Min, MaxStale].
	TTLModeAdaptive TTLMode = "adaptive"
)

// TTLConfig configures the speculative TTL controller (package index/ttl):
// the serialisable part of its Options. A zero field means its default (see Defaults).
type TTLConfig struct {
	// Mode is static, advise or adaptive. Default static.
	Mode TTLMode `json:"mode,omitempty"`
	// Static is the TTL in static and advise modes and the starting TTL in
	// adaptive mode. Default 2s, the documented llm-d default.
	Static Duration `json:"static,omitempty"`
	// Percentile of route-to-confirmation latency the TTL covers: "p95",
	// "p99" or "max" (any pNN is accepted). Default p99.
	Percentile string `json:"percentile,omitempty"`
	// Jitter is slack for scheduling jitter and timing resolution, added to
	// the percentile together with the observed subscriber backlog.
	// Default 100ms.
	Jitter Duration `json:"jitter,omitempty"`
	// MaxStale caps the TTL: the longest a failed prediction may steer
	// routing. Default 5s.
	MaxStale Duration `json:"maxStale,omitempty"`
	// Min is the adaptive floor. Default 250ms.
	Min Duration `json:"min,omitempty"`
	// Resolution rounds advice up to a multiple of itself, after the
	// arithmetic. Default 10ms.
	Resolution Duration `json:"resolution,omitempty"`
	// MinSamples is how many confirmations (for advice) or resolved blocks
	// (for trust) a window needs before it is believed. Default 100.
	MinSamples int `json:"minSamples,omitempty"`
	// Window is how far back advice, trust and exposure look. Default 5m.
	Window Duration `json:"window,omitempty"`
	// WindowSamples bounds the latencies kept per endpoint and model (the
	// overall window keeps four times as many). Default 2048.
	WindowSamples int `json:"windowSamples,omitempty"`
	// Interval is how often Run recomputes advice and, in adaptive mode,
	// moves the TTL. Default 10s.
	Interval Duration `json:"interval,omitempty"`
	// Step bounds one adaptive move. Default 100ms.
	Step Duration `json:"step,omitempty"`
	// Hysteresis: an adaptive TTL moves only when its advice differs from it
	// by more than this. Default 100ms.
	Hysteresis Duration `json:"hysteresis,omitempty"`
	// Grace must equal the index's Options.Grace: how long after expiry a
	// late confirmation is still reported. Default 0, like the index.
	Grace Duration `json:"grace,omitempty"`
	// MaxDecisions bounds the per-decision table; Begin beyond it is counted
	// and not tracked. Default 65536.
	MaxDecisions int `json:"maxDecisions,omitempty"`
	// UsageTimeout is how long a route that used a prediction waits for its
	// response's usage before its result is counted unknown. Default 5m.
	UsageTimeout Duration `json:"usageTimeout,omitempty"`
	// MaxSeries bounds the (endpoint, model) pairs tracked, and so metric
	// label sets; further pairs share the series "_other". Default 1024.
	MaxSeries int `json:"maxSeries,omitempty"`
	// Replica names this router replica in the latency histogram's replica
	// label. Default "default".
	Replica string `json:"replica,omitempty"`
}

// Defaults used when a Config field is zero.
const (
	DefaultTTLStatic        = 2 * time.Second
	DefaultTTLPercentile    = "p99"
	DefaultTTLJitter        = 100 * time.Millisecond
	DefaultTTLMaxStale      = 5 * time.Second
	DefaultTTLMin           = 250 * time.Millisecond
	DefaultTTLResolution    = 10 * time.Millisecond
	DefaultTTLMinSamples    = 100
	DefaultTTLWindow        = 5 * time.Minute
	DefaultTTLWindowSamples = 2048
	DefaultTTLInterval      = 10 * time.Second
	DefaultTTLStep          = 100 * time.Millisecond
	DefaultTTLHysteresis    = 100 * time.Millisecond
	DefaultTTLMaxDecisions  = 65536
	DefaultTTLUsageTimeout  = 5 * time.Minute
	DefaultTTLMaxSeries     = 1024
	DefaultTTLReplica       = "default"
)

// WithDefaults returns a copy of c with every zero field set to its default.
func (c TTLConfig) WithDefaults() TTLConfig {
	setDuration(&c.Static, DefaultTTLStatic)
	setDuration(&c.Jitter, DefaultTTLJitter)
	setDuration(&c.MaxStale, DefaultTTLMaxStale)
	setDuration(&c.Min, DefaultTTLMin)
	setDuration(&c.Resolution, DefaultTTLResolution)
	setDuration(&c.Window, DefaultTTLWindow)
	setDuration(&c.Interval, DefaultTTLInterval)
	setDuration(&c.Step, DefaultTTLStep)
	setDuration(&c.Hysteresis, DefaultTTLHysteresis)
	setDuration(&c.UsageTimeout, DefaultTTLUsageTimeout)
	setInt(&c.MinSamples, DefaultTTLMinSamples)
	setInt(&c.WindowSamples, DefaultTTLWindowSamples)
	setInt(&c.MaxDecisions, DefaultTTLMaxDecisions)
	setInt(&c.MaxSeries, DefaultTTLMaxSeries)
	if c.Mode == "" {
		c.Mode = TTLModeStatic
	}
	if c.Percentile == "" {
		c.Percentile = DefaultTTLPercentile
	}
	if c.Replica == "" {
		c.Replica = DefaultTTLReplica
	}
	return c
}

func setDuration(d *Duration, def time.Duration) {
	if *d == 0 {
		*d = Duration(def)
	}
}

func setInt(n *int, def int) {
	if *n == 0 {
		*n = def
	}
}

// Validate reports every problem in c (after defaults), joined and wrapping
// ErrTTLConfig, or nil.
func (c TTLConfig) Validate() error {
	c = c.WithDefaults()
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	switch c.Mode {
	case TTLModeStatic, TTLModeAdvise, TTLModeAdaptive:
	default:
		bad("mode must be static, advise or adaptive, got %q", c.Mode)
	}
	if _, err := ParsePercentile(c.Percentile); err != nil {
		errs = append(errs, err)
	}
	for _, d := range []struct {
		name string
		v    Duration
	}{{"static", c.Static}, {"jitter", c.Jitter}, {"maxStale", c.MaxStale}, {"min", c.Min},
		{"resolution", c.Resolution}, {"window", c.Window}, {"interval", c.Interval}, {"step", c.Step},
		{"hysteresis", c.Hysteresis}, {"grace", c.Grace},
		{"usageTimeout", c.UsageTimeout}} {
		if d.v < 0 {
			bad("%s must not be negative, got %s", d.name, d.v.D())
		}
	}
	if c.Static > c.MaxStale || c.Min > c.Static {
		bad("want min <= static <= maxStale, got %s, %s, %s", c.Min.D(), c.Static.D(), c.MaxStale.D())
	}
	for _, n := range []struct {
		name string
		v    int
	}{{"minSamples", c.MinSamples}, {"windowSamples", c.WindowSamples},
		{"maxDecisions", c.MaxDecisions}, {"maxSeries", c.MaxSeries}} {
		if n.v < 0 {
			bad("%s must not be negative, got %d", n.name, n.v)
		}
	}
	if c.MinSamples > c.WindowSamples {
		bad("minSamples (%d) must not exceed windowSamples (%d), or advice could never be ready", c.MinSamples, c.WindowSamples)
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("validating ttl config: %w", errors.Join(append([]error{ErrTTLConfig}, errs...)...))
}
