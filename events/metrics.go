package events

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

const (
	metricsNamespace = "warmroute"
	metricsSubsystem = "events"
)

// relayMetrics are the relay's counters. Label values come from closed sets
// (results, reasons, outcomes), never from payloads.
type relayMetrics struct {
	batches       *prometheus.CounterVec // result: forwarded, replayed, duplicate, malformed_frame
	decodeErrors  prometheus.Counter
	gaps          *prometheus.CounterVec // outcome: replayed, unrecoverable
	resets        *prometheus.CounterVec // reason
	resyncs       *prometheus.CounterVec // outcome: complete, empty, partial, failed
	bufferDropped prometheus.Counter
	buffered      prometheus.Gauge
	publishErrors prometheus.Counter
	forwardDelay  prometheus.Histogram
	engineUp      prometheus.Gauge
	reconnects    prometheus.Counter
	heartbeats    *prometheus.CounterVec // result: sent, failed
	scrapeErrors  prometheus.Counter
}

func newRelayMetrics(reg prometheus.Registerer) *relayMetrics {
	m := &relayMetrics{
		batches: counterVec(reg, "relay_batches_total",
			"Engine batches seen by the relay, by result.", "result"),
		decodeErrors: counter(reg, "relay_decode_errors_total",
			"Engine payloads the relay could not decode (still forwarded unchanged)."),
		gaps: counterVec(reg, "relay_gaps_total",
			"Sequence gaps seen on the engine's event socket, by outcome.", "outcome"),
		resets: counterVec(reg, "relay_resets_total",
			"Endpoint resets published to routers, by reason.", "reason"),
		resyncs: counterVec(reg, "relay_resyncs_total",
			"Reads of the engine's replay buffer from seq 0 (at start-up or after the engine's sequence "+
				"started over), by outcome: complete (republished from seq 0), empty (nothing published yet), "+
				"partial (buffer no longer reaches seq 0: reset, then what it holds), failed.", "outcome"),
		bufferDropped: counter(reg, "relay_buffer_dropped_total",
			"Messages dropped from the relay's bounded buffer while NATS was unreachable."),
		buffered: gauge(reg, "relay_buffered_messages",
			"Messages waiting in the relay's buffer for NATS."),
		publishErrors: counter(reg, "relay_publish_errors_total",
			"Failed NATS publish attempts (the message is retried)."),
		forwardDelay: histogram(reg, "relay_forward_seconds",
			"Time from receiving a batch on ZMQ to handing it to NATS."),
		engineUp: gauge(reg, "relay_engine_connected",
			"1 while the relay is connected to the engine's event socket."),
		reconnects: counter(reg, "relay_engine_reconnects_total",
			"Reconnections to the engine's event socket."),
		heartbeats: counterVec(reg, "relay_heartbeats_total",
			"Heartbeats published, by result.", "result"),
		scrapeErrors: counter(reg, "relay_scrape_errors_total",
			"Failed scrapes of the engine's /metrics."),
	}
	return m
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

func newSubscriberMetrics(reg prometheus.Registerer) *subscriberMetrics {
	m := &subscriberMetrics{
		messages: counterVec(reg, "subscriber_messages_total",
			"Event messages received from NATS, by result.", "result"),
		blocks: counterVec(reg, "subscriber_blocks_total",
			"Blocks applied to the index, by event kind.", "kind"),
		skippedEvents: counter(reg, "subscriber_skipped_events_total",
			"Events with an unknown tag that were skipped."),
		gaps: counter(reg, "subscriber_gaps_total",
			"Sequence gaps seen per endpoint across relays; each clears the endpoint."),
		resets: counterVec(reg, "subscriber_resets_total",
			"Endpoint clears, by reason (relay reasons plus gap, malformed, relay_change, stream_start, expired, leave).",
			"reason"),
		expired: counter(reg, "subscriber_endpoints_expired_total",
			"Endpoints removed because their heartbeats stopped."),
		queued: gauge(reg, "subscriber_queued_messages",
			"Messages waiting between the NATS handler and the apply loop."),
		lag: histogram(reg, "subscriber_event_lag_seconds",
			"Time from the engine's batch timestamp to applying it (includes clock skew)."),
	}
	return m
}

func counter(reg prometheus.Registerer, name, help string) prometheus.Counter {
	return registered(reg, prometheus.NewCounter(prometheus.CounterOpts{Namespace: metricsNamespace,
		Subsystem: metricsSubsystem, Name: name, Help: help}))
}

func counterVec(reg prometheus.Registerer, name, help string, labels ...string) *prometheus.CounterVec {
	return registered(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: metricsNamespace,
		Subsystem: metricsSubsystem, Name: name, Help: help}, labels))
}

func gauge(reg prometheus.Registerer, name, help string) prometheus.Gauge {
	return registered(reg, prometheus.NewGauge(prometheus.GaugeOpts{Namespace: metricsNamespace,
		Subsystem: metricsSubsystem, Name: name, Help: help}))
}

func histogram(reg prometheus.Registerer, name, help string) prometheus.Histogram {
	return registered(reg, prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: metricsNamespace,
		Subsystem: metricsSubsystem, Name: name, Help: help,
		Buckets: prometheus.ExponentialBuckets(50e-6, 2, 18)})) // 50us .. ~6.5s
}

// registered registers c on reg and returns it. When an identical collector
// is already registered (two relays or subscribers in one process share a
// registry) it returns the existing one, so their counts add up. A nil reg
// leaves c unregistered.
func registered[T prometheus.Collector](reg prometheus.Registerer, c T) T {
	if reg == nil {
		return c
	}
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(T); ok {
			return existing
		}
	}
	return c
}

// sinkMetrics count what the index sink applied and what it could not.
type sinkMetrics struct {
	events  *prometheus.CounterVec // kind, result: applied, rejected
	dropped *prometheus.CounterVec // reason: block_size, token_range, rank, endpoint, unknown_removed, ...
}

func newSinkMetrics(reg prometheus.Registerer) *sinkMetrics {
	return &sinkMetrics{
		events: counterVec(reg, "sink_events_total",
			"Engine events applied to the index, by kind and result.", "kind", "result"),
		dropped: counterVec(reg, "sink_dropped_total",
			"Events or blocks the index could not take, by reason (unknown_removed, unknown_parent and "+
				"unkeyed_block count blocks or events that were partly applied).", "reason"),
	}
}

// replayMetrics describe a router's JetStream replay at start-up.
type replayMetrics struct {
	messages prometheus.Counter
	failures prometheus.Counter
	duration prometheus.Gauge
}

func newReplayMetrics(reg prometheus.Registerer) *replayMetrics {
	return &replayMetrics{
		messages: counter(reg, "replay_messages_total",
			"Event messages replayed from the JetStream stream at start-up."),
		failures: counter(reg, "replay_failures_total",
			"Start-up replays that failed; the router then starts from live events only."),
		duration: gauge(reg, "replay_duration_seconds",
			"How long the last start-up replay took, from subscribing to ready."),
	}
}

// predictionMetrics count predictions shared with other router replicas.
type predictionMetrics struct {
	published      prometheus.Counter
	dropped        *prometheus.CounterVec // reason: queue_full, publish_error, encode_error, too_large
	received       *prometheus.CounterVec // result: applied, own, expired, malformed, rejected, overflow
	capped         prometheus.Counter
	replayed       prometheus.Counter
	replayFailures prometheus.Counter
}

func newPredictionMetrics(reg prometheus.Registerer) *predictionMetrics {
	return &predictionMetrics{
		published: counter(reg, "predictions_published_total",
			"Speculative predictions of this replica published to the other replicas."),
		dropped: counterVec(reg, "predictions_dropped_total",
			"Predictions of this replica not published, by reason (queue_full, publish_error, encode_error, too_large).",
			"reason"),
		received: counterVec(reg, "predictions_received_total",
			"Prediction messages received, by result (applied, own, expired, malformed, rejected, overflow).", "result"),
		capped: counter(reg, "predictions_capped_total",
			"Remote predictions whose expiry lay beyond the local maximum stale window (clock skew or a longer TTL elsewhere)."),
		replayed: counter(reg, "predictions_replayed_total",
			"Prediction messages replayed from the JetStream stream at start-up."),
		replayFailures: counter(reg, "predictions_replay_failures_total",
			"Start-up prediction replays that failed; the replica then follows live predictions only."),
	}
}
