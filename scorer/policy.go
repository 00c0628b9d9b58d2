package scorer

import (
	"time"

	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/index/ttl"
)

// Route describes a committed routing decision to the TTL policy; it is the
// index/ttl controller's own type, so *ttl.Controller is a TTLPolicy as is.
type Route = ttl.Route

// TTLPolicy is what the pipeline needs from the speculative-TTL controller.
// Implementations must be safe for concurrent use and must not block.
type TTLPolicy interface {
	// TTL is the lifetime of new speculative entries for endpoint; 0 pauses
	// speculation there (no inserts, and existing predictions are not
	// trusted).
	TTL(endpoint, model string) time.Duration
	// Trust in [0,1] weighs speculative blocks in the prefix score.
	Trust(endpoint, model string) float64
	// Begin starts the route-to-confirmation clock of a committed decision.
	Begin(id index.DecisionID, r Route)
}

// UsageObserver is implemented by policies that judge predictions by the
// engine's reported cached tokens. Decision.Usage forwards to it.
type UsageObserver interface {
	Usage(id index.DecisionID, promptTokens, cachedTokens int, known bool)
}

// RouteMover is implemented by policies that follow a decision after
// Begin: Decision.Served calls Moved when a fallback served, with the route
// as made on that endpoint, so the policy accounts the endpoint that really
// served instead of the one chosen.
type RouteMover interface {
	Moved(id index.DecisionID, r Route)
}

// DefaultTTL is the TTL of StaticTTL's zero value: the common starting
// hypothesis before any latency has been measured.
const DefaultTTL = 2 * time.Second

// StaticTTL is the policy used without a controller: a fixed TTL and full
// trust everywhere. The zero value gives DefaultTTL; it is safe for
// concurrent use.
type StaticTTL struct {
	// D is the TTL; zero means DefaultTTL, negative pauses speculation.
	D time.Duration
}

// TTL returns the fixed TTL.
func (s StaticTTL) TTL(string, string) time.Duration {
	switch {
	case s.D == 0:
		return DefaultTTL
	case s.D < 0:
		return 0
	}
	return s.D
}

// Trust is 1 while speculation is on and 0 when paused.
func (s StaticTTL) Trust(string, string) float64 {
	if s.D < 0 {
		return 0
	}
	return 1
}

// Begin does nothing: a static policy learns nothing from decisions.
func (StaticTTL) Begin(index.DecisionID, Route) {}
