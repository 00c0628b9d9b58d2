package predictions

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/warmroute/warmroute/internal/promreg"
)

// Metrics count predictions shared with other router replicas, built by
// NewMetrics. One Metrics serves one Share; it is safe for concurrent use.
type Metrics struct {
	published      prometheus.Counter
	dropped        *prometheus.CounterVec // reason: queue_full, publish_error, encode_error, too_large
	received       *prometheus.CounterVec // result: applied, own, expired, malformed, rejected, overflow
	capped         prometheus.Counter
	replayed       prometheus.Counter
	replayFailures prometheus.Counter
}

// NewMetrics creates the share's metrics and registers them on reg (nil:
// not registered). It fails when reg already holds one of them.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	b := &promreg.Builder{Reg: reg, Namespace: "warmroute", Subsystem: "events"}
	m := &Metrics{
		published: b.Counter("predictions_published_total",
			"Speculative predictions of this replica published to the other replicas."),
		dropped: b.CounterVec("predictions_dropped_total",
			"Predictions of this replica not published, by reason (queue_full, publish_error, encode_error, too_large).",
			"reason"),
		received: b.CounterVec("predictions_received_total",
			"Prediction messages received, by result (applied, own, expired, malformed, rejected, overflow).", "result"),
		capped: b.Counter("predictions_capped_total",
			"Remote predictions whose expiry lay beyond the local maximum stale window (clock skew or a longer TTL elsewhere)."),
		replayed: b.Counter("predictions_replayed_total",
			"Prediction messages replayed from the JetStream stream at start-up."),
		replayFailures: b.Counter("predictions_replay_failures_total",
			"Start-up prediction replays that failed; the replica then follows live predictions only."),
	}
	if b.Err() != nil {
		return nil, fmt.Errorf("registering prediction metrics: %w", b.Err())
	}
	return m, nil
}
