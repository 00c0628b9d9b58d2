package ttl

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Fixed limits used when a Limits field is zero.
const (
	DefaultWindowSamples = 2048
	DefaultMaxDecisions  = 65536
	DefaultUsageTimeout  = 5 * time.Minute
	DefaultMaxSeries     = 1024
	DefaultReplica       = "default"
)

// Limits bound the controller's memory and label sets. They are not
// operator settings (the defaults serve every deployment the router is
// sized for); tests shrink them to reach the bounds. A zero field means its
// default.
type Limits struct {
	// WindowSamples bounds the latencies kept per endpoint and model (the
	// overall window keeps four times as many). Default 2048.
	WindowSamples int
	// MaxDecisions bounds the per-decision table; Begin beyond it is counted
	// and not tracked. Default 65536.
	MaxDecisions int
	// UsageTimeout is how long a route that used a prediction waits for its
	// response's usage before its result is counted unknown. Default 5m.
	UsageTimeout time.Duration
	// MaxSeries bounds the (endpoint, model) pairs tracked, and so metric
	// label sets; further pairs share the series "_other". Default 1024.
	MaxSeries int
	// Window overrides how far back advice, trust and exposure look.
	// Default windowIntervals recompute intervals.
	Window time.Duration
}

// settings is everything the controller runs with: Config with defaults,
// what is derived from it, and the Options that are not file settings.
type settings struct {
	Config
	Min, Window, Hysteresis time.Duration
	Resolution              time.Duration
	Grace                   time.Duration
	WindowSamples           int
	MaxDecisions            int
	UsageTimeout            time.Duration
	MaxSeries               int
	Replica                 string
}

// resolve fills defaults and derives: the adaptive floor and dead band are
// the jitter allowance (advice T = Lq + J is never below J, and moves
// smaller than the timing slack are noise), and the window spans
// windowIntervals recompute intervals.
func (o Options) resolve() settings {
	c := o.Config.WithDefaults()
	s := settings{Config: c, Min: c.Jitter.D(), Hysteresis: c.Jitter.D(),
		Window: windowIntervals * c.Interval.D(), Resolution: Resolution, Grace: o.Grace,
		Replica:       o.Replica,
		WindowSamples: o.Limits.WindowSamples, MaxDecisions: o.Limits.MaxDecisions,
		UsageTimeout: o.Limits.UsageTimeout, MaxSeries: o.Limits.MaxSeries}
	setInt(&s.WindowSamples, DefaultWindowSamples)
	setInt(&s.MaxDecisions, DefaultMaxDecisions)
	setInt(&s.MaxSeries, DefaultMaxSeries)
	if o.Limits.Window != 0 {
		s.Window = o.Limits.Window
	}
	if s.UsageTimeout == 0 {
		s.UsageTimeout = DefaultUsageTimeout
	}
	if s.Replica == "" {
		s.Replica = DefaultReplica
	}
	return s
}

func setInt(n *int, def int) {
	if *n == 0 {
		*n = def
	}
}

func (o Options) validate() error {
	if err := o.Config.Validate(); err != nil {
		return err
	}
	var errs []error
	if o.Grace < 0 {
		errs = append(errs, fmt.Errorf("grace must not be negative, got %s", o.Grace))
	}
	l := o.Limits
	if l.WindowSamples < 0 || l.MaxDecisions < 0 || l.MaxSeries < 0 || l.UsageTimeout < 0 || l.Window < 0 {
		errs = append(errs, fmt.Errorf("limits must not be negative, got %+v", l))
	}
	if ws := max(l.WindowSamples, 0); ws != 0 && o.Config.WithDefaults().MinSamples > ws {
		errs = append(errs, fmt.Errorf("minSamples (%d) must not exceed windowSamples (%d), or advice could never be ready",
			o.Config.WithDefaults().MinSamples, ws))
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("validating ttl options: %w", errors.Join(append([]error{ErrOptions}, errs...)...))
}

// decisionMargin is added to TTL plus grace before a decision's lifecycle
// record is dropped: the index reports stale entries on writes and on its
// owner's periodic Sweep, so the last outcome can trail the grace window.
const decisionMargin = 5 * time.Second

// FreshnessSource reports an endpoint's event stream health; the events
// subscriber implements it (combining the endpoint's models and ranks).
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
	// SilenceLimit is how long the endpoint may stay silent before the
	// source gives it up (the subscriber expires it after its heartbeat
	// misses times its heartbeat interval). The guard pauses speculation
	// at the same limit with neither an event nor a heartbeat within it
	// (stale); with no event after a route that should have made the engine
	// store blocks (silent) it waits the advised TTL plus slack, never longer
	// than this limit. Zero turns both rules off; an endpoint never heard
	// from is still stale.
	SilenceLimit time.Duration
}

// BacklogGauge reports how far behind the event subscriber is: the age of
// the oldest event waiting to be applied. Safe for concurrent use.
type BacklogGauge interface {
	Backlog() time.Duration
}

// Options configures a Controller. Only Config is a file setting; the zero
// value of every other field means its default or disables what it feeds.
type Options struct {
	Config
	// Grace is the index's grace (index.Config.Grace): how long after
	// expiry a late confirmation is still reported. Zero, like the index's
	// zero, ends an expired entry as stale at once.
	Grace time.Duration
	// Replica names this router replica in the latency histogram's replica
	// label. Default "default".
	Replica string
	// Limits bound memory and label sets.
	Limits Limits
	// Freshness drives the freshness guard; nil disables the guard.
	Freshness FreshnessSource
	// Endpoints, when set, lists the endpoints the freshness guard judges
	// every Interval even without traffic, so each has a
	// warmroute_ttl_speculation_paused series from the start (the router
	// passes its pool endpoints and every event stream it knows). Without
	// it an endpoint is judged once a request asks about it.
	Endpoints func() []string
	// Backlog feeds J's backlog term; nil means no backlog is added.
	Backlog BacklogGauge
	// Metrics, from NewMetrics, receives the warmroute_ttl_* series; nil
	// keeps them unregistered. A Metrics serves one Controller.
	Metrics *Metrics
	// Logger logs mode changes and paused endpoints; nil discards.
	Logger *slog.Logger
	// Now is the clock, injectable for tests. Default time.Now.
	Now func() time.Time
}
