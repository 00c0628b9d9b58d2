package scorer

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Liveness reports endpoints whose engine is known to be down (the events
// subscriber implements it from relay heartbeats). A down endpoint is not a
// candidate at all: neither its confirmed nor its speculative blocks attract
// traffic, and it is not picked on load, because a request sent there fails.
// Implementations must be safe for concurrent use and quick: Pick asks once
// per candidate. reason is one of a small fixed set (a metric label).
type Liveness interface {
	Down(endpoint string) (reason string, down bool)
}

// SyncReporter is optionally implemented by a Liveness: Syncing reports an
// endpoint whose state is being re-synced (the events subscriber fetching
// its relay's snapshot). It only changes how the endpoint is counted in
// warmroute_scorer_endpoints; whether it is a candidate meanwhile is Down's
// answer (the subscriber excludes a returning endpoint until synced, with
// reason "syncing", and keeps one that syncs while live).
type SyncReporter interface {
	Syncing(endpoint string) bool
}

// live returns the candidates that are not down, counting each exclusion by
// reason. It returns candidates itself, allocating nothing, when none is
// down (the common case).
func (s *Scorer) live(candidates []string) []string {
	lv := s.opts.Liveness
	if lv == nil {
		return candidates
	}
	first := -1
	for i, ep := range candidates {
		if _, down := lv.Down(ep); down {
			first = i
			break
		}
	}
	if first < 0 {
		return candidates
	}
	out := make([]string, first, len(candidates)-1)
	copy(out, candidates[:first])
	for _, ep := range candidates[first:] {
		if reason, down := lv.Down(ep); down {
			s.opts.Metrics.excludedEndpoint(reason)
			continue
		}
		out = append(out, ep)
	}
	return out
}

var endpointsDesc = prometheus.NewDesc("warmroute_scorer_endpoints",
	"Endpoints of each pool by state: live (a candidate), down (its engine is known down, so excluded) or syncing "+
		"(its state is being re-synced from a relay snapshot; excluded only when it returned from down).",
	[]string{"pool", "state"}, nil)

// endpointsCollector exports each pool's live and down endpoint counts at
// scrape time from the bound pools and liveness. pool is bounded by the
// configured (and discovered) pools.
type endpointsCollector struct {
	pools    atomic.Pointer[Pools]
	liveness atomic.Pointer[Liveness]
}

func (c *endpointsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- endpointsDesc }

func (c *endpointsCollector) Collect(ch chan<- prometheus.Metric) {
	p := c.pools.Load()
	if p == nil {
		return
	}
	var lv Liveness
	if l := c.liveness.Load(); l != nil {
		lv = *l
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	sr, _ := lv.(SyncReporter)
	for name, pl := range p.byName {
		var down, syncing int
		for _, ep := range pl.endpoints {
			switch endpointState(lv, sr, ep) {
			case "down":
				down++
			case "syncing":
				syncing++
			}
		}
		live := len(pl.endpoints) - down - syncing
		ch <- prometheus.MustNewConstMetric(endpointsDesc, prometheus.GaugeValue, float64(live), name, "live")
		ch <- prometheus.MustNewConstMetric(endpointsDesc, prometheus.GaugeValue, float64(down), name, "down")
		ch <- prometheus.MustNewConstMetric(endpointsDesc, prometheus.GaugeValue, float64(syncing), name, "syncing")
	}
}

// reasonSyncing is the Down reason of an endpoint excluded while it syncs.
const reasonSyncing = "syncing"

func endpointState(lv Liveness, sr SyncReporter, ep string) string {
	if lv == nil {
		return "live"
	}
	if reason, down := lv.Down(ep); down {
		if reason == reasonSyncing {
			return "syncing"
		}
		return "down"
	}
	if sr != nil && sr.Syncing(ep) {
		return "syncing"
	}
	return "live"
}
