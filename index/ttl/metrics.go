package ttl

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/index"
)

// Label values outside the endpoint and model names the controller is told.
const (
	labelAll     = "_all"     // the overall series
	labelOther   = "_other"   // pairs beyond MaxSeries
	labelUnknown = "_unknown" // outcomes of decisions this replica did not begin
)

// numEndings is how many index.OutcomeKind endings there are; their String
// names are the ending label values.
const numEndings = int(index.Dropped) + 1

// latencyEndings label the two ways a confirmation can end, on time or
// after expiry, in the one vocabulary of endings.
var latencyEndings = [2]string{index.Confirmed.String(), index.EarlyExpiry.String()}

// latencyBuckets span a fast local event path (a few ms) to a TTL cap well
// beyond the 2 s default, with resolution around 0.1-3 s where TTLs are set.
var latencyBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, .75, 1, 1.25, 1.5, 2, 3, 5, 10, 30}

// Metrics holds every warmroute_ttl_* collector. Labels are bounded: endpoint
// and model by Config.MaxSeries, the rest by fixed sets. New creates them
// from NewMetrics, given in Options.Metrics; a Metrics serves one Controller. Safe for
// concurrent use.
type Metrics struct {
	latency     *prometheus.HistogramVec
	endings     *prometheus.CounterVec
	current     *prometheus.GaugeVec
	advised     *prometheus.GaugeVec
	quantile    *prometheus.GaugeVec
	slackUsed   *prometheus.GaugeVec
	exposureReq *prometheus.GaugeVec
	exposureTok *prometheus.GaugeVec
	trust       *prometheus.GaugeVec
	paused      *prometheus.GaugeVec
	routes      *prometheus.CounterVec
	falseWarm   *prometheus.CounterVec
	backlog     prometheus.Gauge
	decisions   prometheus.Gauge
	tableDrops  *prometheus.CounterVec
}

func opts(name, help string) prometheus.Opts {
	return prometheus.Opts{Namespace: "warmroute", Subsystem: "ttl", Name: name, Help: help}
}

func gaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts(opts(name, help)), labels)
}

func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts(opts(name, help)), labels)
}

// NewMetrics creates the controller's collectors and registers them on reg;
// a nil reg registers nothing.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := newMetrics()
	if err := m.register(reg); err != nil {
		return nil, fmt.Errorf("registering ttl metrics: %w", err)
	}
	return m, nil
}

func newMetrics() *Metrics {
	em := []string{"endpoint", "model"}
	return &Metrics{
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "warmroute", Subsystem: "ttl",
			Name:    "confirmation_latency_seconds",
			Help:    "Route-to-confirmation latency of a decision's first and last speculative block; ending=early_expiry for confirmations after expiry.",
			Buckets: latencyBuckets}, []string{"endpoint", "model", "prompt_class", "replica", "block", "ending"}),
		endings: counterVec("endings_total", "Speculative blocks of this replica's decisions ended: confirmed, early_expiry (confirmed within grace after expiry), stale_expiry (never confirmed, or withdrawn), dropped (cleared or evicted).",
			"endpoint", "model", "ending"),
		current:     gaugeVec("current_seconds", "TTL given to new speculative entries (0 while paused is not shown here; see speculation_paused).", em...),
		advised:     gaugeVec("advised_seconds", "Advised TTL: latency percentile plus backlog and jitter slack, rounded, capped; 0 before enough samples.", em...),
		quantile:    gaugeVec("latency_quantile_seconds", "The configured percentile (Lq) of route-to-confirmation latency over the window.", em...),
		slackUsed:   gaugeVec("backlog_slack_ratio", "Observed subscriber backlog divided by the slack the current TTL leaves above Lq; +Inf when the TTL does not cover Lq.", em...),
		exposureReq: gaugeVec("exposure_requests", "Live failed predictions at the current TTL: routed rate x failed-prediction probability x TTL.", em...),
		exposureTok: gaugeVec("exposure_tokens", "Predicted prefix tokens at risk in live failed predictions at the current TTL.", em...),
		trust:       gaugeVec("trust", "Measured confirmation rate of speculative blocks over the window (1 before enough samples, 0 while paused).", em...),
		paused:      gaugeVec("speculation_paused", "1 while the freshness guard pauses speculation for the endpoint.", "endpoint"),
		routes:      counterVec("speculative_routes_total", "Routes that used a prediction, by whether the engine reported the predicted blocks cached.", "endpoint", "model", "result"),
		falseWarm:   counterVec("false_warm_prefill_tokens_total", "Predicted-cached prompt tokens the engine had to prefill after a speculative route missed.", em...),
		backlog:     prometheus.NewGauge(prometheus.GaugeOpts(opts("subscriber_backlog_seconds", "Peak event subscriber backlog over the window, the J backlog term."))),
		decisions:   prometheus.NewGauge(prometheus.GaugeOpts(opts("decisions", "Decisions tracked in the per-decision table."))),
		tableDrops:  counterVec("decision_drops_total", "Decisions not tracked (reason=full) or forgotten before every block ended (reason=expired).", "reason"),
	}
}

func (m *Metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.latency, m.endings, m.current, m.advised, m.quantile, m.slackUsed,
		m.exposureReq, m.exposureTok, m.trust, m.paused, m.routes, m.falseWarm, m.backlog, m.decisions, m.tableDrops}
}

func (m *Metrics) register(reg prometheus.Registerer) error {
	if reg == nil {
		return nil
	}
	var errs []error
	for _, c := range m.collectors() {
		errs = append(errs, reg.Register(c))
	}
	return errors.Join(errs...)
}

// seriesMetrics are one (endpoint, model) pair's children, bound once so the
// hot paths skip the label lookup.
type seriesMetrics struct {
	endings   [numEndings]prometheus.Counter
	routes    [numResults]prometheus.Counter
	falseWarm prometheus.Counter
	// hist is bound lazily: most (class, block, ending) combinations of most
	// pairs never occur, and an unused histogram costs a series per bucket.
	hist [numClasses][2][2]prometheus.Observer
}

func (m *Metrics) bind(endpoint, model string) seriesMetrics {
	var sm seriesMetrics
	for i := range sm.endings {
		sm.endings[i] = m.endings.WithLabelValues(endpoint, model, index.OutcomeKind(i).String())
	}
	for i, r := range resultNames {
		sm.routes[i] = m.routes.WithLabelValues(endpoint, model, r)
	}
	sm.falseWarm = m.falseWarm.WithLabelValues(endpoint, model)
	return sm
}
