package inferencepool

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are a watcher's collectors; pass them to New. Safe for concurrent
// use.
type Metrics struct {
	members prometheus.Gauge
	changes prometheus.Counter
	// watchErrors counts list/watch failures by resource and reason.
	watchErrors *prometheus.CounterVec
}

// NewMetrics creates the collectors and registers them on reg; a nil reg
// registers nothing. One router follows at most one InferencePool per
// pool, and the gauges sum over them.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		members: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "warmroute", Subsystem: "inferencepool", Name: "members",
			Help: "Ready endpoints of the followed InferencePool, as last handed to the router's pool.",
		}),
		changes: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "warmroute", Subsystem: "inferencepool", Name: "membership_changes_total",
			Help: "Times the followed InferencePool's membership changed (the first sync counts).",
		}),
		watchErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "warmroute", Subsystem: "inferencepool", Name: "watch_errors_total",
			Help: "List or watch failures of the InferencePool and Pod informers, by resource and reason (forbidden: the RBAC Role lacks a permission).",
		}, []string{"resource", "reason"}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.members, m.changes, m.watchErrors} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering inferencepool metrics: %w", err)
		}
	}
	return m, nil
}
