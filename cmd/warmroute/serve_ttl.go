package main

import (
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/cmd/warmroute/serveconfig"
	"github.com/warmroute/warmroute/index/ttl"
)

// eventsLink hands the events runtime, which starts with serve's run, to the
// parts built before it: the TTL controller's freshness guard and backlog
// term, and the scorer's engine load gauges. Before the runtime is linked
// (or with events disabled) nothing is known about any endpoint.
type eventsLink struct{ rt atomic.Pointer[eventsRuntime] }

func (l *eventsLink) set(rt *eventsRuntime) { l.rt.Store(rt) }

// Freshness implements ttl.FreshnessSource.
func (l *eventsLink) Freshness(endpoint string) (ttl.Freshness, bool) {
	rt := l.rt.Load()
	if rt == nil {
		return ttl.Freshness{}, false
	}
	f, ok := rt.Freshness(endpoint)
	if !ok {
		return ttl.Freshness{}, false
	}
	// A sequence gap clears the endpoint at once (the subscriber never keeps
	// a view it knows is incomplete), so no gap is left unrecovered here.
	return ttl.Freshness{LastEvent: f.LastEvent, LastHeartbeat: f.LastHeartbeat, Connected: f.EngineConnected}, true
}

// Backlog implements ttl.BacklogGauge.
func (l *eventsLink) Backlog() time.Duration {
	if rt := l.rt.Load(); rt != nil && rt.sub != nil {
		return rt.sub.Backlog()
	}
	return 0
}

// EngineLoad implements scorer.EngineLoad from relay heartbeats.
func (l *eventsLink) EngineLoad(endpoint string) (running, waiting, kvUsage float64, ok bool) {
	rt := l.rt.Load()
	if rt == nil {
		return 0, 0, 0, false
	}
	f, ok := rt.Freshness(endpoint)
	if !ok || f.Load == nil {
		return 0, 0, 0, false
	}
	return f.Load.Running, f.Load.Waiting, f.Load.KVCacheUsage, true
}

// newTTL builds the speculative TTL controller. Without events the freshness
// guard is off: there is no stream whose health could be judged, and
// predictions simply expire unconfirmed.
func newTTL(cfg serveconfig.Config, link *eventsLink, reg prometheus.Registerer, log *slog.Logger) (*ttl.Controller, error) {
	m, err := ttl.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	opts := cfg.TTLOptions(replicaName())
	opts.Metrics, opts.Logger = m, log
	if !cfg.Events.Disabled {
		opts.Freshness, opts.Backlog = link, link
	}
	return ttl.New(opts)
}

// replicaName names this router replica in TTL metrics and prediction
// sharing: its host name, which Kubernetes sets to the pod's name.
func replicaName() string {
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return ttl.DefaultReplica
}
