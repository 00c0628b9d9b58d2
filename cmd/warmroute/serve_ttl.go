package main

import (
	"flag"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/index/ttl"
)

// newTTL builds the speculative TTL controller. Without events (sub nil)
// the freshness guard is off: there is no stream whose health could be
// judged, and predictions simply expire unconfirmed.
func newTTL(cfg api.ServeConfig, sub *subscriber.Subscriber, reg prometheus.Registerer, log *slog.Logger) (*ttl.Controller, error) {
	opts := ttl.Options{Config: cfg.TTL, Registerer: reg, Logger: log}
	if sub != nil {
		opts.Freshness, opts.Backlog = sub, sub
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
