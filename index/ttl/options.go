package ttl

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

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
	// [Min, MaxStale].
	ModeAdaptive Mode = "adaptive"
)

// Config is the serialisable part of Options, for the configuration file and
// flags. A zero field means its default (see Defaults).
type Config struct {
	// Mode is static, advise or adaptive. Default static.
	Mode Mode `json:"mode,omitempty"`
	// Static is the TTL in static and advise modes and the starting TTL in
	// adaptive mode. Default 2s, the documented llm-d default.
	Static api.Duration `json:"static,omitempty"`
	// Percentile of route-to-confirmation latency the TTL covers: "p95",
	// "p99" or "max" (any pNN is accepted). Default p99.
	Percentile string `json:"percentile,omitempty"`
	// Jitter is slack for scheduling jitter and timing resolution, added to
	// the percentile together with the observed subscriber backlog.
	// Default 100ms.
	Jitter api.Duration `json:"jitter,omitempty"`
	// MaxStale caps the TTL: the longest a failed prediction may steer
	// routing. Default 5s.
	MaxStale api.Duration `json:"maxStale,omitempty"`
	// Min is the adaptive floor. Default 250ms.
	Min api.Duration `json:"min,omitempty"`
	// Resolution rounds advice up to a multiple of itself, after the
	// arithmetic. Default 10ms.
	Resolution api.Duration `json:"resolution,omitempty"`
	// MinSamples is how many confirmations (for advice) or resolved blocks
	// (for trust) a window needs before it is believed. Default 100.
	MinSamples int `json:"minSamples,omitempty"`
	// Window is how far back advice, trust and exposure look. Default 5m.
	Window api.Duration `json:"window,omitempty"`
	// WindowSamples bounds the latencies kept per endpoint and model (the
	// overall window keeps four times as many). Default 2048.
	WindowSamples int `json:"windowSamples,omitempty"`
	// Interval is how often Run recomputes advice and, in adaptive mode,
	// moves the TTL. Default 10s.
	Interval api.Duration `json:"interval,omitempty"`
	// Step bounds one adaptive move. Default 100ms.
	Step api.Duration `json:"step,omitempty"`
	// Hysteresis: an adaptive TTL moves only when its advice differs from it
	// by more than this. Default 100ms.
	Hysteresis api.Duration `json:"hysteresis,omitempty"`
	// Grace must equal the index's Options.Grace: how long after expiry a
	// late confirmation is still reported. Default 0, like the index.
	Grace api.Duration `json:"grace,omitempty"`
	// FreshnessLimit pauses speculation for an endpoint with neither an event
	// nor a heartbeat within it. Default 5s.
	FreshnessLimit api.Duration `json:"freshnessLimit,omitempty"`
	// MaxDecisions bounds the per-decision table; Begin beyond it is counted
	// and not tracked. Default 65536.
	MaxDecisions int `json:"maxDecisions,omitempty"`
	// UsageTimeout is how long a route that used a prediction waits for its
	// response's usage before its result is counted unknown. Default 5m.
	UsageTimeout api.Duration `json:"usageTimeout,omitempty"`
	// MaxSeries bounds the (endpoint, model) pairs tracked, and so metric
	// label sets; further pairs share the series "_other". Default 1024.
	MaxSeries int `json:"maxSeries,omitempty"`
	// Replica names this router replica in the latency histogram's replica
	// label. Default "default".
	Replica string `json:"replica,omitempty"`
}

// Defaults used when a Config field is zero.
const (
	DefaultStatic         = 2 * time.Second
	DefaultPercentile     = "p99"
	DefaultJitter         = 100 * time.Millisecond
	DefaultMaxStale       = 5 * time.Second
	DefaultMin            = 250 * time.Millisecond
	DefaultResolution     = 10 * time.Millisecond
	DefaultMinSamples     = 100
	DefaultWindow         = 5 * time.Minute
	DefaultWindowSamples  = 2048
	DefaultInterval       = 10 * time.Second
	DefaultStep           = 100 * time.Millisecond
	DefaultHysteresis     = 100 * time.Millisecond
	DefaultFreshnessLimit = 5 * time.Second
	DefaultMaxDecisions   = 65536
	DefaultUsageTimeout   = 5 * time.Minute
	DefaultMaxSeries      = 1024
	DefaultReplica        = "default"
)

// decisionMargin is added to TTL plus grace before a decision's lifecycle
// record is dropped: the index reports stale entries on writes and on its
// owner's periodic Sweep, so the last outcome can trail the grace window.
const decisionMargin = 5 * time.Second

// FreshnessSource reports an endpoint's event stream health. cmd adapts the
// events subscriber to it (combining the endpoint's models and ranks).
// Implementations must be safe for concurrent use and quick.
type FreshnessSource interface {
	// Freshness reports what is known about endpoint; ok is false when the
	// endpoint's stream has never been seen.
	Freshness(endpoint string) (f Freshness, ok bool)
}

// Freshness is one endpoint's event stream state.
type Freshness struct {
	// LastEvent and LastHeartbeat are when the last batch and heartbeat were
	// handled, on the router's clock; zero when never.
	LastEvent, LastHeartbeat time.Time
	// Connected is false when the relay reports its engine disconnected.
	Connected bool
	// Gap is true while a sequence gap has not been recovered (replayed or
	// reset), so the index's view of the endpoint is unknown.
	Gap bool
}

// BacklogGauge reports how far behind the event subscriber is: the age of
// the oldest event waiting to be applied. Safe for concurrent use.
type BacklogGauge interface {
	Backlog() time.Duration
}

// Options configures a Controller. Only Config is serialisable; the zero
// value of every other field disables what it feeds.
type Options struct {
	Config
	// Freshness drives the freshness guard; nil disables the guard.
	Freshness FreshnessSource
	// Backlog feeds J's backlog term; nil means no backlog is added.
	Backlog BacklogGauge
	// Registerer receives the warmroute_ttl_* metrics; nil registers none.
	Registerer prometheus.Registerer
	// Logger logs mode changes and paused endpoints; nil discards.
	Logger *slog.Logger
	// Now is the clock, injectable for tests. Default time.Now.
	Now func() time.Time
}

// WithDefaults returns a copy of c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	setDur(&c.Static, DefaultStatic)
	setDur(&c.Jitter, DefaultJitter)
	setDur(&c.MaxStale, DefaultMaxStale)
	setDur(&c.Min, DefaultMin)
	setDur(&c.Resolution, DefaultResolution)
	setDur(&c.Window, DefaultWindow)
	setDur(&c.Interval, DefaultInterval)
	setDur(&c.Step, DefaultStep)
	setDur(&c.Hysteresis, DefaultHysteresis)
	setDur(&c.FreshnessLimit, DefaultFreshnessLimit)
	setDur(&c.UsageTimeout, DefaultUsageTimeout)
	setInt(&c.MinSamples, DefaultMinSamples)
	setInt(&c.WindowSamples, DefaultWindowSamples)
	setInt(&c.MaxDecisions, DefaultMaxDecisions)
	setInt(&c.MaxSeries, DefaultMaxSeries)
	if c.Mode == "" {
		c.Mode = ModeStatic
	}
	if c.Percentile == "" {
		c.Percentile = DefaultPercentile
	}
	if c.Replica == "" {
		c.Replica = DefaultReplica
	}
	return c
}

func setDur(d *api.Duration, def time.Duration) {
	if *d == 0 {
		*d = api.Duration(def)
	}
}

func setInt(n *int, def int) {
	if *n == 0 {
		*n = def
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
	}{{"static", c.Static}, {"jitter", c.Jitter}, {"maxStale", c.MaxStale}, {"min", c.Min},
		{"resolution", c.Resolution}, {"window", c.Window}, {"interval", c.Interval}, {"step", c.Step},
		{"hysteresis", c.Hysteresis}, {"grace", c.Grace}, {"freshnessLimit", c.FreshnessLimit},
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
	return fmt.Errorf("validating ttl options: %w", errors.Join(append([]error{ErrOptions}, errs...)...))
}
