package predictions

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
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
	b := &builder{reg: reg}
	m := &Metrics{
		published: b.counter("predictions_published_total",
			"Speculative predictions of this replica published to the other replicas."),
		dropped: b.counterVec("predictions_dropped_total",
			"Predictions of this replica not published, by reason (queue_full, publish_error, encode_error, too_large).",
			"reason"),
		received: b.counterVec("predictions_received_total",
			"Prediction messages received, by result (applied, own, expired, malformed, rejected, overflow).", "result"),
		capped: b.counter("predictions_capped_total",
			"Remote predictions whose expiry lay beyond the local maximum stale window (clock skew or a longer TTL elsewhere)."),
		replayed: b.counter("predictions_replayed_total",
			"Prediction messages replayed from the JetStream stream at start-up."),
		replayFailures: b.counter("predictions_replay_failures_total",
			"Start-up prediction replays that failed; the replica then follows live predictions only."),
	}
	if b.err != nil {
		return nil, fmt.Errorf("registering prediction metrics: %w", b.err)
	}
	return m, nil
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
