package main

import (
	"flag"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/api"
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
func newTTL(cfg api.ServeConfig, link *eventsLink, reg prometheus.Registerer, log *slog.Logger) (*ttl.Controller, error) {
	opts := ttl.Options{Config: cfg.TTL, Registerer: reg, Logger: log}
	if !cfg.Events.Disabled {
		opts.Freshness, opts.Backlog = link, link
	}
	return ttl.New(opts)
}

// ttlFlags are serve's TTL settings.
type ttlFlags struct {
	o                        api.TTLConfig
	static, jitter, maxStale time.Duration
	mode                     string
}

func (t *ttlFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&t.mode, "ttl-mode", "", "speculative TTL mode: static, advise or adaptive (default static)")
	fs.DurationVar(&t.static, "ttl", 0, "static speculative TTL, and the adaptive starting value (default 2s)")
	fs.StringVar(&t.o.Percentile, "ttl-percentile", "", "confirmation latency percentile the TTL covers: p95, p99, max (default p99)")
	fs.DurationVar(&t.jitter, "ttl-jitter", 0, "jitter allowance added to the percentile with the observed backlog (default 100ms)")
	fs.DurationVar(&t.maxStale, "ttl-max-stale", 0, "cap on the TTL: the longest a failed prediction may steer routing (default 5s)")
	fs.StringVar(&t.o.Replica, "replica", "", "this router replica's name in TTL metrics (default \"default\")")
}

// apply copies the flag name into cfg; false when name is not a TTL flag.
func (t *ttlFlags) apply(cfg *api.TTLConfig, name string) bool {
	switch name {
	case "ttl-mode":
		cfg.Mode = api.TTLMode(t.mode)
	case "ttl":
		cfg.Static = api.Duration(t.static)
	case "ttl-percentile":
		cfg.Percentile = t.o.Percentile
	case "ttl-jitter":
		cfg.Jitter = api.Duration(t.jitter)
	case "ttl-max-stale":
		cfg.MaxStale = api.Duration(t.maxStale)
	case "replica":
		cfg.Replica = t.o.Replica
	default:
		return false
	}
	return true
}
