package tokenizer

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the package's Prometheus collectors. Labels are bounded:
// "mode" is "prompt" or "chat", "result" is "agree", "disagree" or "error".
type Metrics struct {
	driftChecks *prometheus.CounterVec
}

// NewMetrics creates the collectors and registers them on reg; a nil reg
// registers nothing.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		driftChecks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "warmroute",
			Subsystem: "tokenizer",
			Name:      "drift_checks_total",
			Help:      "Sampled requests encoded both locally and by the engine's /tokenize, by outcome. Any disagree means the local tokenizer does not match the engine.",
		}, []string{"mode", "result"}),
	}
	if reg == nil {
		return m, nil
	}
	if err := reg.Register(m.driftChecks); err != nil {
		return nil, fmt.Errorf("registering tokenizer metrics: %w", err)
	}
	return m, nil
}
