package subscriber

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/warmroute/warmroute/events/wire"
	"github.com/warmroute/warmroute/internal/promreg"
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
	b := &promreg.Builder{Reg: reg, Namespace: metricsNamespace, Subsystem: metricsSubsystem}
	m := &Metrics{sub: newSubscriberMetrics(b), replay: newReplayMetrics(b), sink: newSinkMetrics(b),
		fresh: &freshnessCollector{}}
	b.Add(m.fresh)
	if b.Err() != nil {
		return nil, fmt.Errorf("registering subscriber metrics: %w", b.Err())
	}
	return m, nil
}

// subscriberMetrics are the router side's counters.
type subscriberMetrics struct {
	messages *prometheus.CounterVec // result: applied, duplicate, malformed, overflow, bad_header
	blocks   *prometheus.CounterVec // kind: stored, removed
	// appliedMsgs, storedBlocks and removedBlocks are messages' and blocks'
	// series for every applied message, resolved once (see sinkMetrics).
	appliedMsgs, storedBlocks, removedBlocks prometheus.Counter
	skippedEvents                            prometheus.Counter
	gaps                                     prometheus.Counter
	resets                                   *prometheus.CounterVec // reason
	expired                                  prometheus.Counter
	queued                                   prometheus.Gauge
	lag                                      prometheus.Histogram
	syncs                                    *prometheus.CounterVec // reason, result
	syncSeconds                              prometheus.Histogram
	syncBlocks                               prometheus.Counter
}

func newSubscriberMetrics(b *promreg.Builder) subscriberMetrics {
	m := subscriberMetrics{
		messages: b.CounterVec("subscriber_messages_total",
			"Event messages received from NATS, by result.", "result"),
		blocks: b.CounterVec("subscriber_blocks_total",
			"Blocks applied to the index, by event kind.", "kind"),
		skippedEvents: b.Counter("subscriber_skipped_events_total",
			"Events with an unknown tag that were skipped."),
		gaps: b.Counter("subscriber_gaps_total",
			"Sequence gaps seen per endpoint across relays; each clears the endpoint."),
		resets: b.CounterVec("subscriber_resets_total",
			"Endpoint clears, by reason (relay reasons plus gap, malformed, relay_change, stream_start, expired, leave).",
			"reason"),
		expired: b.Counter("subscriber_endpoints_expired_total",
			"Endpoints removed because their heartbeats stopped."),
		queued: b.Gauge("subscriber_queued_messages",
			"Messages waiting between the NATS handler and the apply loop."),
		lag: b.Histogram("subscriber_event_lag_seconds",
			"Time from the engine's batch timestamp to applying it (includes clock skew).", delayBuckets),
		syncs: b.CounterVec("subscriber_syncs_total",
			"Snapshot syncs of a source from its relay's mirror, by reason (start, reconnect, expired, epoch, gap, "+
				"overflow) and result (ok, timeout, no_responders, refused, failed, abandoned).", "reason", "result"),
		syncSeconds: b.Histogram("subscriber_sync_seconds",
			"Time from requesting a snapshot to having applied it (or given up).", delayBuckets),
		syncBlocks: b.Counter("subscriber_sync_blocks_total",
			"Held blocks applied to the index from snapshots."),
	}
	m.appliedMsgs = m.messages.WithLabelValues("applied")
	m.storedBlocks = m.blocks.WithLabelValues("stored")
	m.removedBlocks = m.blocks.WithLabelValues("removed")
	return m
}

// sinkMetrics count what the index sink applied and what it could not.
type sinkMetrics struct {
	events  *prometheus.CounterVec // kind, result: applied, rejected
	dropped *prometheus.CounterVec // reason: token_range, rank, endpoint, unkeyed_block, unknown_kind, other
	// applied (by wire.Kind) and unkeyed are events' and dropped's series
	// the hot path counts into, resolved once: WithLabelValues hashes its
	// labels on every call, a few percent of a message's apply time.
	applied [wire.KindAllBlocksCleared + 1]prometheus.Counter
	unkeyed prometheus.Counter
}

func newSinkMetrics(b *promreg.Builder) sinkMetrics {
	m := sinkMetrics{
		events: b.CounterVec("sink_events_total",
			"Engine events applied to the index, by kind and result (applied, rejected, "+
				"sparse_group: a hybrid model's non-full-attention KV cache group, not indexed).", "kind", "result"),
		dropped: b.CounterVec("sink_dropped_total",
			"Events or blocks the index could not take and does not count itself, by reason "+
				"(token_range, rank, endpoint, unknown_kind, other; unkeyed_block counts blocks of "+
				"partly applied events).", "reason"),
	}
	for k := wire.KindBlockStored; k <= wire.KindAllBlocksCleared; k++ { // not KindUnknown, which is never applied
		m.applied[k] = m.events.WithLabelValues(k.String(), "applied")
	}
	m.unkeyed = m.dropped.WithLabelValues("unkeyed_block")
	return m
}

// replayMetrics describe a router's JetStream replay at start-up.
type replayMetrics struct {
	messages prometheus.Counter
	failures prometheus.Counter
	duration prometheus.Gauge
}

func newReplayMetrics(b *promreg.Builder) replayMetrics {
	return replayMetrics{
		messages: b.Counter("replay_messages_total",
			"Event messages replayed from the JetStream stream at start-up."),
		failures: b.Counter("replay_failures_total",
			"Start-up replays that failed; the router then starts from live events only."),
		duration: b.Gauge("replay_duration_seconds",
			"How long the last start-up replay took, from subscribing to ready."),
	}
}

// delayBuckets span 50us to about 6.5s, for the event path's delays.
var delayBuckets = prometheus.ExponentialBuckets(50e-6, 2, 18)

const (
	metricsNamespace = "warmroute"
	metricsSubsystem = "events"
)
