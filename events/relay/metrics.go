package relay

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the relay's counters, built by NewMetrics. One Metrics serves
// one Relay; it is safe for concurrent use. Label values come from closed sets
// (results, reasons, outcomes), never from payloads.
type Metrics struct {
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

// NewMetrics creates the relay's metrics and registers them on reg (nil:
// not registered). It fails when reg already holds one of them, for
// instance when a second relay registers on the same registry.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	b := &builder{reg: reg}
	m := &Metrics{
		batches: b.counterVec("relay_batches_total",
			"Engine batches seen by the relay, by result.", "result"),
		decodeErrors: b.counter("relay_decode_errors_total",
			"Engine payloads the relay could not decode (still forwarded unchanged)."),
		gaps: b.counterVec("relay_gaps_total",
			"Sequence gaps seen on the engine's event socket, by outcome.", "outcome"),
		resets: b.counterVec("relay_resets_total",
			"Endpoint resets published to routers, by reason.", "reason"),
		resyncs: b.counterVec("relay_resyncs_total",
			"Reads of the engine's replay buffer from seq 0 (at start-up or after the engine's sequence "+
				"started over), by outcome: complete (republished from seq 0), empty (nothing published yet), "+
				"partial (buffer no longer reaches seq 0: reset, then what it holds), failed.", "outcome"),
		bufferDropped: b.counter("relay_buffer_dropped_total",
			"Messages dropped from the relay's bounded buffer while NATS was unreachable."),
		buffered: b.gauge("relay_buffered_messages",
			"Messages waiting in the relay's buffer for NATS."),
		publishErrors: b.counter("relay_publish_errors_total",
			"Failed NATS publish attempts (the message is retried)."),
		forwardDelay: b.histogram("relay_forward_seconds",
			"Time from receiving a batch on ZMQ to handing it to NATS."),
		engineUp: b.gauge("relay_engine_connected",
			"1 while the relay is connected to the engine's event socket."),
		reconnects: b.counter("relay_engine_reconnects_total",
			"Reconnections to the engine's event socket."),
		heartbeats: b.counterVec("relay_heartbeats_total",
			"Heartbeats published, by result.", "result"),
		scrapeErrors: b.counter("relay_scrape_errors_total",
			"Failed scrapes of the engine's /metrics."),
	}
	if b.err != nil {
		return nil, fmt.Errorf("registering relay metrics: %w", b.err)
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
