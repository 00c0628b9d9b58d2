package extproc

import (
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/scorer"
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
	outcomeOverloaded
	outcomeResponseNotFound
	outcomeShed
	numOutcomes
)

var outcomeNames = [numOutcomes]string{
	outcomeRouted:       "routed",
	outcomeBadRequest:   "bad_request",
	outcomeUnknownModel: "unknown_model",
	outcomeTooLarge:     "too_large",
	outcomeNoEndpoint:   "no_endpoint",
	outcomeInternal:     "internal",
	outcomeOverloaded:   "overloaded",
	// a previous_response_id the router cannot reach (scorer.Affinity)
	outcomeResponseNotFound: "response_not_found",
	outcomeShed:             "shed",
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
	case http.StatusTooManyRequests:
		return outcomeShed
	default:
		return outcomeInternal
	}
}

// Metrics are the ext_proc server's collectors; pass them to New. Labels are
// bounded: outcome and result by fixed sets. Safe for concurrent use.
type Metrics struct {
	// requests is indexed by outcome so the hot path does no label lookup.
	requests         [numOutcomes]prometheus.Counter
	decisionDuration prometheus.Histogram
	streamsActive    prometheus.Gauge
	bufferedBytes    prometheus.Gauge
	// Router-observed prompt cache hit rate: both counters add only responses
	// whose cached_tokens was reported, so cached/prompt is the hit rate.
	promptTokens, cachedTokens prometheus.Counter
	// usage is indexed by whether cached_tokens was known: [0] unknown, [1] known.
	usage [2]prometheus.Counter
	// handshakeFailures counts refused TLS handshakes by reason (tlscount.go).
	handshakeFailures *prometheus.CounterVec
	// served is indexed by scorer.ServedResult.
	served [3]prometheus.Counter
}

// NewMetrics creates the server's collectors and registers them on reg; a nil
// reg registers nothing.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "warmroute", Subsystem: "extproc", Name: "requests_total",
		Help: "Requests seen by the ext_proc server, by outcome.",
	}, []string{"outcome"})
	m := &Metrics{
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
		bufferedBytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "warmroute", Subsystem: "extproc", Name: "buffered_bytes",
			Help: "Request body bytes held by all streams, counted against maxBufferedBytes.",
		}),
	}
	for o := range numOutcomes {
		m.requests[o] = requests.WithLabelValues(o.String())
	}
	usage := m.addUsage()
	m.handshakeFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "warmroute", Subsystem: "extproc", Name: "tls_handshake_failures_total",
		Help: "TLS handshakes the ext_proc listener refused, by reason (no_client_cert, unknown_ca, protocol, other).",
	}, []string{"reason"})
	served := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "warmroute", Subsystem: "extproc", Name: "served_total",
		Help: "Routed responses whose proxy reported the endpoint it used, by how it compares with the choice.",
	}, []string{"result"})
	for _, r := range []scorer.ServedResult{scorer.ServedChosen, scorer.ServedFallback, scorer.ServedUnlisted} {
		m.served[r] = served.WithLabelValues(r.String())
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{requests, m.decisionDuration, m.streamsActive, m.bufferedBytes, m.promptTokens, m.cachedTokens, usage, m.handshakeFailures, served} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering extproc metrics: %w", err)
		}
	}
	return m, nil
}

// addUsage makes the response usage metrics and returns the labelled vector
// to register.
func (m *Metrics) addUsage() *prometheus.CounterVec {
	m.promptTokens = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "warmroute", Subsystem: "extproc", Name: "prompt_tokens_total",
		Help: "Prompt tokens reported by responses whose cached_tokens was known.",
	})
	m.cachedTokens = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "warmroute", Subsystem: "extproc", Name: "cached_tokens_total",
		Help: "Prompt tokens the engines reported as served from their prefix cache.",
	})
	usage := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "warmroute", Subsystem: "extproc", Name: "usage_total",
		Help: "Routed responses by whether their cached-token usage was known.",
	}, []string{"result"})
	m.usage[0], m.usage[1] = usage.WithLabelValues("unknown"), usage.WithLabelValues("known")
	return usage
}

// observeUsage counts one routed response's usage.
func (m *Metrics) observeUsage(u usage) {
	if !u.known {
		m.usage[0].Inc()
		return
	}
	m.usage[1].Inc()
	m.promptTokens.Add(float64(u.prompt))
	m.cachedTokens.Add(float64(u.cached))
}
