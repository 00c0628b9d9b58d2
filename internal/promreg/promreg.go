// Package promreg builds Prometheus collectors that register themselves as
// they are made, keeping the first registration error, so that a package's
// NewMetrics reads as a list of its metrics and still returns every failure.
package promreg

import "github.com/prometheus/client_golang/prometheus"

// Builder makes collectors named Namespace_Subsystem_name and registers each
// on Reg (nil: none). Not safe for concurrent use; one per NewMetrics call.
type Builder struct {
	Reg                  prometheus.Registerer
	Namespace, Subsystem string
	err                  error
}

// Err is the first registration error, or nil.
func (b *Builder) Err() error { return b.err }

// Add registers a collector made elsewhere (a custom Collector).
func (b *Builder) Add(c prometheus.Collector) {
	if b.Reg == nil || b.err != nil {
		return
	}
	if err := b.Reg.Register(c); err != nil {
		b.err = err
	}
}

func (b *Builder) opts(name, help string) prometheus.Opts {
	return prometheus.Opts{Namespace: b.Namespace, Subsystem: b.Subsystem, Name: name, Help: help}
}

// Counter makes and registers a counter.
func (b *Builder) Counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts(b.opts(name, help)))
	b.Add(c)
	return c
}

// CounterVec makes and registers a counter vector.
func (b *Builder) CounterVec(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts(b.opts(name, help)), labels)
	b.Add(c)
	return c
}

// Gauge makes and registers a gauge.
func (b *Builder) Gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts(b.opts(name, help)))
	b.Add(g)
	return g
}

// Histogram makes and registers a histogram with the given buckets.
func (b *Builder) Histogram(name, help string, buckets []float64) prometheus.Histogram {
	o := b.opts(name, help)
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: o.Namespace, Subsystem: o.Subsystem,
		Name: o.Name, Help: o.Help, Buckets: buckets})
	b.Add(h)
	return h
}
