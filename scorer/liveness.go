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
	"Endpoints of each pool by state: live (a candidate) or down (its engine is known down, so excluded).",
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
	for name, pl := range p.byName {
		down := 0
		for _, ep := range pl.endpoints {
			if lv != nil {
				if _, d := lv.Down(ep); d {
					down++
				}
			}
		}
		ch <- prometheus.MustNewConstMetric(endpointsDesc, prometheus.GaugeValue, float64(len(pl.endpoints)-down), name, "live")
		ch <- prometheus.MustNewConstMetric(endpointsDesc, prometheus.GaugeValue, float64(down), name, "down")
	}
}
