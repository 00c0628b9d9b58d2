package scorer

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

var (
	inflightDesc = prometheus.NewDesc(
		"warmroute_scorer_inflight_requests",
		"Requests routed to an endpoint whose responses have not ended, as tracked by this router.",
		[]string{"endpoint"}, nil,
	)
	prefillDesc = prometheus.NewDesc(
		"warmroute_scorer_queued_prefill_tokens",
		"Prompt tokens routed to an endpoint and not expected to be cached there, whose responses have not started.",
		[]string{"endpoint"}, nil,
	)
)

// loadCollector exports Load at scrape time, so the hot path pays nothing for
// the metric. The endpoint label is bounded by the number of model-server pods.
type loadCollector struct{ load *Load }

// NewLoadCollector returns a collector of warmroute_scorer_inflight_requests
// and warmroute_scorer_queued_prefill_tokens.
func NewLoadCollector(load *Load) prometheus.Collector { return loadCollector{load} }

func (c loadCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- inflightDesc
	ch <- prefillDesc
}

func (c loadCollector) Collect(ch chan<- prometheus.Metric) {
	c.load.mu.RLock()
	defer c.load.mu.RUnlock()
	for ep, l := range c.load.byEnd {
		ch <- prometheus.MustNewConstMetric(inflightDesc, prometheus.GaugeValue, float64(l.inflight.Load()), ep)
		ch <- prometheus.MustNewConstMetric(prefillDesc, prometheus.GaugeValue, float64(l.prefill.Load()), ep)
	}
}

// Pipeline stages timed by warmroute_scorer_stage_duration_seconds.
const (
	stageTokenize = "tokenize"
	stageKeys     = "keys"
	stageLookup   = "lookup"
	stageScore    = "score"
	stageCommit   = "commit"
)

// Metrics are the pipeline's collectors. A nil *Metrics records nothing, so
// tests and tools can run a Scorer without a registry. Safe for concurrent use.
type Metrics struct {
	stage          *prometheus.HistogramVec
	decisions      *prometheus.CounterVec
	tokenizeErrors *prometheus.CounterVec
}

// NewMetrics creates the pipeline's collectors and registers them on reg.
// Labels are bounded: stage (five names), basis (confirmed, speculative,
// none), reason (a fixed set of failure classes).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		stage: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "warmroute", Subsystem: "scorer", Name: "stage_duration_seconds",
			Help:    "Time spent in each stage of a routing decision.",
			Buckets: prometheus.ExponentialBuckets(1e-6, 4, 10), // 1us .. 262ms
		}, []string{"stage"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "warmroute", Subsystem: "scorer", Name: "decisions_total",
			Help: "Routing decisions by what the chosen endpoint's cached prefix rested on: confirmed events, a speculative prediction, or none.",
		}, []string{"basis"}),
		tokenizeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "warmroute", Subsystem: "scorer", Name: "tokenize_errors_total",
			Help: "Requests routed on load alone because their prompt could not be turned into block keys.",
		}, []string{"reason"}),
	}
	for _, c := range []prometheus.Collector{m.stage, m.decisions, m.tokenizeErrors} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *Metrics) observe(stage string, since time.Time) {
	if m != nil {
		m.stage.WithLabelValues(stage).Observe(time.Since(since).Seconds())
	}
}

func (m *Metrics) decision(b Basis) {
	if m != nil {
		m.decisions.WithLabelValues(b.String()).Inc()
	}
}

func (m *Metrics) tokenizeError(reason string) {
	if m != nil {
		m.tokenizeErrors.WithLabelValues(reason).Inc()
	}
}
