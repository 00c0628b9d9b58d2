package affinity

import (
	"fmt"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/internal/promreg"
	"github.com/warmroute/warmroute/scorer"
)

// Metrics count response-id affinity, built by NewMetrics. One Metrics
// serves one Store and its Share; safe for concurrent use.
type Metrics struct {
	lookups [4]prometheus.Counter  // by scorer.AffinityResult
	learned *prometheus.CounterVec // source: local, remote, replay
	evicted *prometheus.CounterVec // reason: age, room, restart
	shared  *prometheus.CounterVec // result: published, publish_error, received, own, malformed, ignored (expired or already known)
	// replayMsgs (result: applied, own, malformed, ignored), replays
	// (result: complete, partial, failed) and replayDuration describe
	// the start-up replay of the affinity stream.
	replayMsgs     *prometheus.CounterVec
	replays        *prometheus.CounterVec
	replayDuration prometheus.Histogram
	entries        *entriesCollector
	lookupVec      *prometheus.CounterVec
}

// NewMetrics creates the metrics and registers them on reg (nil: not
// registered). It fails when reg already holds one of them.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	b := &promreg.Builder{Reg: reg, Namespace: "warmroute", Subsystem: "affinity"}
	m := &Metrics{
		lookupVec: b.CounterVec("lookups_total",
			"Requests naming a previous_response_id, by result: hit (routed to the storing endpoint), "+
				"endpoint_down (its endpoint is down: answered 404), unknown (not stored within the window: answered 404), "+
				"unsure (not known, table incomplete: routed on load).", "result"),
		learned: b.CounterVec("learned_total",
			"Stored response ids learnt, by source: local (this replica's responses), remote (another replica's, live) "+
				"or replay (another replica's, replayed from the JetStream stream at start-up).", "source"),
		evicted: b.CounterVec("evictions_total",
			"Response ids dropped from the table, by reason: age (older than affinity.maxAge), room (the pool's table was full) "+
				"or restart (the storing engine restarted: answered 404 until it ages out).",
			"reason"),
		shared: b.CounterVec("share_messages_total",
			"Response-id messages between replicas, by result: published, publish_error, received, own, malformed, ignored (expired or already known).",
			"result"),
		replayMsgs: b.CounterVec("replay_messages_total",
			"Response-id messages replayed from the JetStream stream at start-up, by result: applied, own, "+
				"malformed (skipped), ignored (expired or already known).", "result"),
		replays: b.CounterVec("replays_total",
			"Start-up replays of the affinity stream, by result: complete (the stream covers affinity.maxAge: "+
				"unknown ids are answered 404), partial (it covers less: unknown ids stay unsure until the window fills) "+
				"or failed (stream unavailable or replay cut short).", "result"),
		replayDuration: b.Histogram("replay_duration_seconds",
			"Time the start-up replay of the affinity stream took.", prometheus.ExponentialBuckets(0.01, 4, 8)),
	}
	for _, r := range []scorer.AffinityResult{scorer.AffinityHit, scorer.AffinityEndpointDown, scorer.AffinityUnknown, scorer.AffinityUnsure} {
		m.lookups[r] = m.lookupVec.WithLabelValues(r.String())
	}
	m.entries = &entriesCollector{}
	b.Add(m.entries)
	if b.Err() != nil {
		return nil, fmt.Errorf("registering affinity metrics: %w", b.Err())
	}
	return m, nil
}

func (m *Metrics) bindStore(s *Store) { m.entries.store.Store(s) }

var entriesDesc = prometheus.NewDesc("warmroute_affinity_entries",
	"Response ids kept over all pools.", nil, nil)

// entriesCollector reads the store's size at scrape time.
type entriesCollector struct{ store atomic.Pointer[Store] }

func (c *entriesCollector) Describe(ch chan<- *prometheus.Desc) { ch <- entriesDesc }

func (c *entriesCollector) Collect(ch chan<- prometheus.Metric) {
	n := 0
	if s := c.store.Load(); s != nil {
		n = s.Len()
	}
	ch <- prometheus.MustNewConstMetric(entriesDesc, prometheus.GaugeValue, float64(n))
}
