package sim

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// engineMetrics mimic vLLM's own names on purpose: routers and dashboards
// that scrape a real engine must read the simulator unchanged.
type engineMetrics struct {
	running          prometheus.Gauge
	waiting          prometheus.Gauge
	promptTokens     prometheus.Counter
	generationTokens prometheus.Counter
}

func newEngineMetrics(reg prometheus.Registerer) (*engineMetrics, error) {
	m := &engineMetrics{
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
	}
	return m, register(reg, m.running, m.waiting, m.promptTokens, m.generationTokens)
}

// serverMetrics are the simulator's own, under warmroute_sim.
type serverMetrics struct {
	// requests is labelled by api (completions, chat_completions) and
	// outcome (the outcome* constants), both closed sets.
	requests *prometheus.CounterVec
}

func newServerMetrics(reg prometheus.Registerer) (*serverMetrics, error) {
	m := &serverMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "warmroute",
			Subsystem: "sim",
			Name:      "requests_total",
			Help:      "Generation requests answered, by API and outcome.",
		}, []string{"api", "outcome"}),
	}
	return m, register(reg, m.requests)
}

func register(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("registering sim metrics: %w", err)
		}
	}
	return nil
}
