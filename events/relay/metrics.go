package relay

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/warmroute/warmroute/internal/promreg"
)

// Metrics are the relay's counters, built by NewMetrics. One Metrics serves
// one Relay; it is safe for concurrent use. Label values come from closed sets
// (results, reasons, outcomes), never from payloads.
type Metrics struct {
	batches        *prometheus.CounterVec // result: forwarded, replayed, duplicate, malformed_frame
	decodeErrors   prometheus.Counter
	gaps           *prometheus.CounterVec // outcome: replayed, unrecoverable
	resets         *prometheus.CounterVec // reason
	resyncs        *prometheus.CounterVec // outcome: complete, empty, partial, failed
	bufferDropped  prometheus.Counter
	buffered       prometheus.Gauge
	publishErrors  prometheus.Counter
	forwardDelay   prometheus.Histogram
	engineUp       prometheus.Gauge
	reconnects     prometheus.Counter
	heartbeats     *prometheus.CounterVec // result: sent, failed
	scrapeErrors   prometheus.Counter
	rankMismatch   prometheus.Counter
	healthFailures prometheus.Counter
	mirrorBlocks   prometheus.Gauge
	mirrorDropped  *prometheus.CounterVec // reason: full, unknown_hash, media, tokens, lora
	snapshots      *prometheus.CounterVec // result: sent, failed
	snapshotBlocks prometheus.Counter
}

// NewMetrics creates the relay's metrics and registers them on reg (nil:
// not registered). It fails when reg already holds one of them, for
// instance when a second relay registers on the same registry.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	b := &promreg.Builder{Reg: reg, Namespace: "warmroute", Subsystem: "events"}
	m := &Metrics{
		batches: b.CounterVec("relay_batches_total",
			"Engine batches seen by the relay, by result.", "result"),
		decodeErrors: b.Counter("relay_decode_errors_total",
			"Engine payloads the relay could not decode (still forwarded unchanged)."),
		gaps: b.CounterVec("relay_gaps_total",
			"Sequence gaps seen on the engine's event socket, by outcome.", "outcome"),
		resets: b.CounterVec("relay_resets_total",
			"Endpoint resets published to routers, by reason.", "reason"),
		resyncs: b.CounterVec("relay_resyncs_total",
			"Reads of the engine's replay buffer from seq 0 (at start-up or after the engine's sequence "+
				"started over), by outcome: complete (republished from seq 0), empty (nothing published yet), "+
				"partial (buffer no longer reaches seq 0: reset, then what it holds), failed.", "outcome"),
		bufferDropped: b.Counter("relay_buffer_dropped_total",
			"Messages dropped from the relay's bounded buffer while NATS was unreachable."),
		buffered: b.Gauge("relay_buffered_messages",
			"Messages waiting in the relay's buffer for NATS."),
		publishErrors: b.Counter("relay_publish_errors_total",
			"Failed NATS publish attempts (the message is retried)."),
		forwardDelay: b.Histogram("relay_forward_seconds",
			"Time from receiving a batch on ZMQ to handing it to NATS.", delayBuckets),
		engineUp: b.Gauge("relay_engine_connected",
			"1 while the engine is proven there (a dial succeeded, or a frame or replay came from it, and its health endpoint answers when probed)."),
		reconnects: b.Counter("relay_engine_reconnects_total",
			"Reconnections to the engine's event socket."),
		heartbeats: b.CounterVec("relay_heartbeats_total",
			"Heartbeats published, by result.", "result"),
		scrapeErrors: b.Counter("relay_scrape_errors_total",
			"Failed scrapes of the engine's /metrics."),
		healthFailures: b.Counter("relay_engine_health_failures_total",
			"Failed probes of the engine's health endpoint (the engine then counts as disconnected)."),
		rankMismatch: b.Counter("relay_dp_rank_mismatch_total",
			"Times the engine's batches named another data-parallel rank than configured; the relay then publishes under the engine's."),
		mirrorBlocks: b.Gauge("relay_mirror_blocks",
			"Blocks in the relay's mirror of the engine (held ones and removed parents of held ones)."),
		mirrorDropped: b.CounterVec("relay_mirror_dropped_blocks_total",
			"Blocks the mirror did not take, by reason: full (--mirror-max-blocks reached), unknown_hash "+
				"(a token-less store of a hash never seen), media (more than 8 media), tokens (fewer tokens than "+
				"hashes, or blocks over 1024 tokens), lora (more than 65536 adapters).", "reason"),
		snapshots: b.CounterVec("relay_snapshots_total",
			"Snapshot requests answered from the mirror, by result: sent, failed (the reply could not be published).", "result"),
		snapshotBlocks: b.Counter("relay_snapshot_blocks_total",
			"Blocks sent in snapshots."),
	}
	if b.Err() != nil {
		return nil, fmt.Errorf("registering relay metrics: %w", b.Err())
	}
	return m, nil
}

// delayBuckets span 50us to about 6.5s, for the event path's delays.
var delayBuckets = prometheus.ExponentialBuckets(50e-6, 2, 18)
