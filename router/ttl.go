package router

import (
	"log/slog"
	"os"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/index/ttl"
)

// newTTL builds the speculative TTL controller. Without events (sub nil)
// the freshness guard is off: there is no stream whose health could be
// judged, and predictions simply expire unconfirmed.
func newTTL(cfg Config, sub *subscriber.Subscriber, reg prometheus.Registerer, log *slog.Logger) (*ttl.Controller, error) {
	m, err := ttl.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	opts := cfg.TTLOptions(replicaName())
	opts.Metrics, opts.Logger = m, log
	if sub != nil {
		opts.Freshness, opts.Backlog = sub, sub
		opts.Endpoints = knownEndpoints(cfg, sub)
	}
	return ttl.New(opts)
}

// knownEndpoints lists, for the freshness guard's rounds, every configured
// pool endpoint and every endpoint whose event stream the subscriber knows
// (discovered ones included), so each has a speculation_paused series
// before any request went there.
func knownEndpoints(cfg Config, sub *subscriber.Subscriber) func() []string {
	var configured []string
	for _, p := range cfg.Pools {
		configured = append(configured, p.Endpoints...)
	}
	return func() []string {
		out := slices.Clone(configured)
		for _, src := range sub.Sources() {
			out = append(out, src.Endpoint)
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
}

// replicaName names this router replica in TTL metrics and prediction
// sharing: its host name, which Kubernetes sets to the pod's name.
func replicaName() string {
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return ttl.DefaultReplica
}
