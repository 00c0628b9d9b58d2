package subscriber

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the router side's metrics, built by NewMetrics and shared by
// a Subscriber and its IndexSink. Safe for concurrent use.
type Metrics struct {
	sub    subscriberMetrics
	replay replayMetrics
	sink   sinkMetrics
	fresh  *freshnessCollector
}

// NewMetrics creates the router side's metrics and registers them on reg
// (nil: not registered). It fails when reg already holds one of them, for
// instance when a second subscriber registers on the same registry.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	b := &builder{reg: reg}
	m := &Metrics{sub: newSubscriberMetrics(b), replay: newReplayMetrics(b), sink: newSinkMetrics(b),
		fresh: &freshnessCollector{}}
	b.add(m.fresh)
	if b.err != nil {
		return nil, fmt.Errorf("registering subscriber metrics: %w", b.err)
	}
	return m, nil
}

// subscriberMetrics are the router side's counters.
type subscriberMetrics struct {
	messages      *prometheus.CounterVec // result: applied, duplicate, malformed, overflow, bad_header
	blocks        *prometheus.CounterVec // kind: stored, removed
	skippedEvents prometheus.Counter
	gaps          prometheus.Counter
	resets        *prometheus.CounterVec // reason
	expired       prometheus.Counter
	queued        prometheus.Gauge
	lag           prometheus.Histogram
}

func newSubscriberMetrics(b *builder) subscriberMetrics {
	return subscriberMetrics{
		messages: b.counterVec("subscriber_messages_total",
			"Event messages received from NATS, by result.", "result"),
		blocks: b.counterVec("subscriber_blocks_total",
			"Blocks applied to the index, by event kind.", "kind"),
		skippedEvents: b.counter("subscriber_skipped_events_total",
			"Events with an unknown tag that were skipped."),
		gaps: b.counter("subscriber_gaps_total",
			"Sequence gaps seen per endpoint across relays; each clears the endpoint."),
		resets: b.counterVec("subscriber_resets_total",
			"Endpoint clears, by reason (relay reasons plus gap, malformed, relay_change, stream_start, expired, leave).",
			"reason"),
		expired: b.counter("subscriber_endpoints_expired_total",
			"Endpoints removed because their heartbeats stopped."),
		queued: b.gauge("subscriber_queued_messages",
			"Messages waiting between the NATS handler and the apply loop."),
		lag: b.histogram("subscriber_event_lag_seconds",
			"Time from the engine's batch timestamp to applying it (includes clock skew)."),
	}
}

// sinkMetrics count what the index sink applied and what it could not.
type sinkMetrics struct {
	events  *prometheus.CounterVec // kind, result: applied, rejected
	dropped *prometheus.CounterVec // reason: token_range, rank, endpoint, unkeyed_block, unknown_kind, other
}

func newSinkMetrics(b *builder) sinkMetrics {
	return sinkMetrics{
		events: b.counterVec("sink_events_total",
			"Engine events applied to the index, by kind and result.", "kind", "result"),
		dropped: b.counterVec("sink_dropped_total",
			"Events or blocks the index could not take and does not count itself, by reason "+
				"(token_range, rank, endpoint, unknown_kind, other; unkeyed_block counts blocks of "+
				"partly applied events).", "reason"),
	}
}

// replayMetrics describe a router's JetStream replay at start-up.
type replayMetrics struct {
	messages prometheus.Counter
	failures prometheus.Counter
	duration prometheus.Gauge
}

func newReplayMetrics(b *builder) replayMetrics {
	return replayMetrics{
		messages: b.counter("replay_messages_total",
			"Event messages replayed from the JetStream stream at start-up."),
		failures: b.counter("replay_failures_total",
			"Start-up replays that failed; the router then starts from live events only."),
		duration: b.gauge("replay_duration_seconds",
			"How long the last start-up replay took, from subscribing to ready."),
	}
}

const (
	metricsNamespace = "warmroute"
	metricsSubsystem = "events"
)

// builder creates collectors and registers each on reg (nil: none), keeping
// the first registration error so NewMetrics can return it.
type builder struct {
	reg prometheus.Registerer
	err error
}

func (b *builder) add(c prometheus.Collector) {
	if b.reg == nil || b.err != nil {
		return
	}
	if err := b.reg.Register(c); err != nil {
		b.err = err
	}
}

func (b *builder) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Namespace: metricsNamespace,
		Subsystem: metricsSubsystem, Name: name, Help: help})
	b.add(c)
	return c
}

func (b *builder) counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: metricsNamespace,
		Subsystem: metricsSubsystem, Name: name, Help: help}, labels)
	b.add(c)
	return c
}

func (b *builder) gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: metricsNamespace,
		Subsystem: metricsSubsystem, Name: name, Help: help})
	b.add(g)
	return g
}

func (b *builder) histogram(name, help string) prometheus.Histogram {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: metricsNamespace,
		Subsystem: metricsSubsystem, Name: name, Help: help,
		Buckets: prometheus.ExponentialBuckets(50e-6, 2, 18)}) // 50us .. ~6.5s
	b.add(h)
	return h
}
