package ttl

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/api"
)

// Config is the serialisable part of Options (api.TTLConfig, so the router's
// configuration file schema can hold it).
type Config = api.TTLConfig

// Mode is how the controller sets the TTL.
type Mode = api.TTLMode

// Modes. The zero value means ModeStatic.
const (
	// ModeStatic gives every endpoint Config.Static; the advisor still
	// measures, so switching to advise shows what it would say.
	ModeStatic = api.TTLModeStatic
	// ModeAdvise computes and exports advice; the TTL stays static.
	ModeAdvise = api.TTLModeAdvise
	// ModeAdaptive moves each TTL towards its advice, slowly and within
	// [Min, MaxStale].
	ModeAdaptive = api.TTLModeAdaptive
)

// Defaults used when a Config field is zero.
const (
	DefaultStatic        = api.DefaultTTLStatic
	DefaultPercentile    = api.DefaultTTLPercentile
	DefaultJitter        = api.DefaultTTLJitter
	DefaultMaxStale      = api.DefaultTTLMaxStale
	DefaultMin           = api.DefaultTTLMin
	DefaultResolution    = api.DefaultTTLResolution
	DefaultMinSamples    = api.DefaultTTLMinSamples
	DefaultWindow        = api.DefaultTTLWindow
	DefaultWindowSamples = api.DefaultTTLWindowSamples
	DefaultInterval      = api.DefaultTTLInterval
	DefaultStep          = api.DefaultTTLStep
	DefaultHysteresis    = api.DefaultTTLHysteresis
	DefaultMaxDecisions  = api.DefaultTTLMaxDecisions
	DefaultUsageTimeout  = api.DefaultTTLUsageTimeout
	DefaultMaxSeries     = api.DefaultTTLMaxSeries
	DefaultReplica       = api.DefaultTTLReplica
)

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
	// at the same limit: with neither an event nor a heartbeat within it
	// (stale), or with no event within it after a route that should have
	// made the engine store blocks (silent). Zero turns both limits off; an
	// endpoint never heard from is still stale.
	SilenceLimit time.Duration
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
