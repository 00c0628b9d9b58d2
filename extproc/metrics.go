package extproc

import (
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
)

// outcome is the bounded label set of warmroute_extproc_requests_total.
type outcome int

const (
	outcomeRouted outcome = iota
	outcomeBadRequest
	outcomeUnknownModel
	outcomeTooLarge
	outcomeNoEndpoint
	outcomeInternal
	numOutcomes
)

var outcomeNames = [numOutcomes]string{
	outcomeRouted:       "routed",
	outcomeBadRequest:   "bad_request",
	outcomeUnknownModel: "unknown_model",
	outcomeTooLarge:     "too_large",
	outcomeNoEndpoint:   "no_endpoint",
	outcomeInternal:     "internal",
}

func (o outcome) String() string { return outcomeNames[o] }

// outcomeOf names the outcome of a request answered with an error status.
func outcomeOf(status int) outcome {
	switch status {
	case http.StatusBadRequest:
		return outcomeBadRequest
	case http.StatusNotFound:
		return outcomeUnknownModel
	case http.StatusRequestEntityTooLarge:
		return outcomeTooLarge
	case http.StatusServiceUnavailable:
		return outcomeNoEndpoint
	default:
		return outcomeInternal
	}
}

type metrics struct {
	// requests is indexed by outcome so the hot path does no label lookup.
	requests         [numOutcomes]prometheus.Counter
	decisionDuration prometheus.Histogram
	streamsActive    prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "warmroute", Subsystem: "extproc", Name: "requests_total",
		Help: "Requests seen by the ext_proc server, by outcome.",
	}, []string{"outcome"})
	m := &metrics{
		decisionDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "warmroute", Subsystem: "extproc", Name: "decision_duration_seconds",
			Help: "Time to parse a request body and pick its endpoint.",
			// 25us .. ~0.8s: parsing a multi-megabyte body sits at the top.
			Buckets: prometheus.ExponentialBuckets(25e-6, 2, 16),
		}),
		streamsActive: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "warmroute", Subsystem: "extproc", Name: "streams_active",
			Help: "Open ext_proc streams.",
		}),
	}
	for o := range numOutcomes {
		m.requests[o] = requests.WithLabelValues(o.String())
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{requests, m.decisionDuration, m.streamsActive} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering extproc metrics: %w", err)
		}
	}
	return m, nil
}
