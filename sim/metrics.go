package sim

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the simulator's collectors: the engine's vLLM-named gauges and
// counters, its KV event counters and the HTTP server's request counter.
// A Metrics serves one Engine and its Server; New makes its own on the
// Server's registry, NewEngine takes one from NewMetrics. Safe for
// concurrent use.
type Metrics struct {
	engine *engineMetrics
	events *eventMetrics
	server *serverMetrics
}

// NewMetrics creates the simulator's collectors and registers them on reg; a
// nil reg registers nothing.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{engine: newEngineMetrics(), events: newEventMetrics(), server: newServerMetrics()}
	if reg == nil {
		return m, nil
	}
	e, ev := m.engine, m.events
	if err := register(reg, e.running, e.waiting, e.promptTokens, e.generationTokens, e.kvUsage,
		e.prefixQueries, e.prefixHits, e.cacheConfig, ev.batches, ev.replays, m.server.requests); err != nil {
		return nil, err
	}
	return m, nil
}

// engineMetrics mimic vLLM's own names on purpose: routers and dashboards
// that scrape a real engine must read the simulator unchanged.
type engineMetrics struct {
	running          prometheus.Gauge
	waiting          prometheus.Gauge
	promptTokens     prometheus.Counter
	generationTokens prometheus.Counter
	kvUsage          prometheus.Gauge
	prefixQueries    prometheus.Counter
	prefixHits       prometheus.Counter
	cacheConfig      *prometheus.GaugeVec
}

func newEngineMetrics() *engineMetrics {
	return &engineMetrics{
		running: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "vllm:num_requests_running",
			Help: "Requests holding a running slot (prefill or decode).",
		}),
		waiting: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "vllm:num_requests_waiting",
			Help: "Requests waiting for a running slot.",
		}),
		promptTokens: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vllm:prompt_tokens_total",
			Help: "Prompt tokens prefilled.",
		}),
		generationTokens: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vllm:generation_tokens_total",
			Help: "Tokens generated.",
		}),
		kvUsage: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "vllm:kv_cache_usage_perc",
			Help: "Fraction of KV blocks referenced by running requests (0..1).",
		}),
		prefixQueries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vllm:prefix_cache_queries_total",
			Help: "Prompt tokens looked up in the prefix cache.",
		}),
		prefixHits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vllm:prefix_cache_hits_total",
			Help: "Prompt tokens served from the prefix cache.",
		}),
		// One series whose labels carry the configuration, as vLLM's info metric.
		cacheConfig: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "vllm:cache_config_info",
			Help: "KV cache configuration; the value is always 1.",
		}, []string{"block_size", "num_gpu_blocks", "enable_prefix_caching"}),
	}
}

// eventMetrics count what happens to KV event batches on their way out.
type eventMetrics struct {
	// batches is labelled by outcome: published, dropped_injected,
	// dropped_paused, dropped_overflow, dropped_restart, send_failed.
	batches *prometheus.CounterVec
	// replays is labelled by outcome: ok, failed, malformed.
	replays *prometheus.CounterVec
}

func newEventMetrics() *eventMetrics {
	return &eventMetrics{
		batches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "warmroute", Subsystem: "sim", Name: "kv_event_batches_total",
			Help: "KV event batches by delivery outcome.",
		}, []string{"outcome"}),
		replays: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "warmroute", Subsystem: "sim", Name: "kv_replay_requests_total",
			Help: "Replay requests answered, by outcome.",
		}, []string{"outcome"}),
	}
}

// serverMetrics are the simulator's own, under warmroute_sim.
type serverMetrics struct {
	// requests is labelled by api (completions, chat_completions) and
	// outcome (the outcome* constants), both closed sets.
	requests *prometheus.CounterVec
}

func newServerMetrics() *serverMetrics {
	return &serverMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "warmroute",
			Subsystem: "sim",
			Name:      "requests_total",
			Help:      "Generation requests answered, by API and outcome.",
		}, []string{"api", "outcome"}),
	}
}

func register(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("registering sim metrics: %w", err)
		}
	}
	return nil
}
