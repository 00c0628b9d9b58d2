package scorer

import (
	"fmt"
	"sync/atomic"
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

// loadCollector exports the bound Load at scrape time, so the hot path pays
// nothing for the metric. The endpoint label is bounded by the number of
// model-server pods.
type loadCollector struct{ load atomic.Pointer[Load] }

func (c *loadCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- inflightDesc
	ch <- prefillDesc
}

func (c *loadCollector) Collect(ch chan<- prometheus.Metric) {
	load := c.load.Load()
	if load == nil {
		return
	}
	load.mu.RLock()
	defer load.mu.RUnlock()
	for ep, l := range load.byEnd {
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
	// stageSettle is the commit's deferred expiry (Decision.Settle), done
	// after the request was answered: not part of what it waits for.
	stageSettle = "settle"
)

// Metrics are the pipeline's collectors, and the load gauges of the Load the
// first Scorer built with them tracks (pass them as Options.Metrics). A nil
// *Metrics records nothing, so tests and tools can run a Scorer without a
// registry. Safe for concurrent use.
type Metrics struct {
	stage           *prometheus.HistogramVec
	decisions       *prometheus.CounterVec
	tokenizeErrors  *prometheus.CounterVec
	excluded        *prometheus.CounterVec
	load            *loadCollector
	endpoints       *endpointsCollector
	modelLenFetches *prometheus.CounterVec
	modelLen        *prometheus.GaugeVec
	pd              pdMetrics
}

// NewMetrics creates the pipeline's collectors and registers them on reg; a
// nil reg registers nothing. Labels are bounded: stage (five names), basis
// (confirmed, speculative, none), reason (a fixed set of failure classes),
// endpoint (the model-server pods).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		load: &loadCollector{}, endpoints: &endpointsCollector{}, pd: newPDMetrics(),
		excluded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "warmroute", Subsystem: "scorer", Name: "excluded_endpoints_total",
			Help: "Candidates left out of a decision because their engine is known down, by reason (disconnected, expired, syncing).",
		}, []string{"reason"}),
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
	m.modelLenFetches = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "warmroute", Subsystem: "scorer", Name: "max_model_len_fetches_total",
		Help: "Requests to an engine's /v1/models for the max_model_len of a pool that does not configure it, by result (ok, missing, error).",
	}, []string{"result"})
	m.modelLen = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "warmroute", Subsystem: "scorer", Name: "learned_max_model_len",
		Help: "The max_model_len a pool without a configured one learned from its engines.",
	}, []string{"pool"})
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.stage, m.decisions, m.tokenizeErrors, m.excluded, m.load, m.endpoints, m.modelLenFetches, m.modelLen, m.pd.decisions, m.pd.picks} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering scorer metrics: %w", err)
		}
	}
	return m, nil
}

// bindLoad makes m export load's gauges unless another Load was bound first.
func (m *Metrics) bindLoad(load *Load) {
	if m != nil && load != nil {
		m.load.load.CompareAndSwap(nil, load)
	}
}

// bindPools makes m export pools' endpoint states, judged by lv, unless
// other pools were bound first.
func (m *Metrics) bindPools(pools *Pools, lv Liveness) {
	if m == nil || pools == nil || !m.endpoints.pools.CompareAndSwap(nil, pools) {
		return
	}
	if lv != nil {
		m.endpoints.liveness.Store(&lv)
	}
}

func (m *Metrics) modelLenFetch(result string) {
	if m != nil {
		m.modelLenFetches.WithLabelValues(result).Inc()
	}
}

func (m *Metrics) maxModelLen(pool string, n int) {
	if m != nil {
		m.modelLen.WithLabelValues(pool).Set(float64(n))
	}
}

func (m *Metrics) excludedEndpoint(reason string) {
	if m != nil {
		m.excluded.WithLabelValues(reason).Inc()
	}
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

// pdMetrics count P/D decisions (pd.go) and which endpoint got which role.
type pdMetrics struct {
	decisions *prometheus.CounterVec
	picks     *prometheus.CounterVec
}

func newPDMetrics() pdMetrics {
	return pdMetrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "warmroute", Subsystem: "scorer", Name: "pd_decisions_total",
			Help: "Decisions in prefill/decode pools by placement: disaggregated (a prefiller and another decoder), aggregated (the chosen prefiller decodes too), no_prefill (no live prefiller: the decoder prefills).",
		}, []string{"placement"}),
		picks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "warmroute", Subsystem: "scorer", Name: "pd_role_picks_total",
			Help: "Endpoints chosen in prefill/decode pools, by the role they were given (prefill, decode) and endpoint.",
		}, []string{"role", "endpoint"}),
	}
}

func (m *Metrics) pdDecision(placement, prefiller, decoder string) {
	if m != nil {
		m.pd.decisions.WithLabelValues(placement).Inc()
		m.pd.picks.WithLabelValues("prefill", prefiller).Inc()
		m.pd.picks.WithLabelValues("decode", decoder).Inc()
	}
}
