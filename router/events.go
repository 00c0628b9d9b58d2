package router

import (
	"context"
	"fmt"
	"time"

	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/events/subscriber"
)

// follow is what the subscriber follows: the configured models, or every
// model when no pool is configured so that discovery alone can populate the
// router.
func follow(cfg Config) subscriber.Follow {
	f := subscriber.Follow{Endpoints: map[string][]string{}}
	for _, p := range cfg.Pools {
		f.Models = append(append(f.Models, p.Name), p.Models...)
		for _, m := range append([]string{p.Name}, p.Models...) {
			f.Endpoints[m] = append(f.Endpoints[m], p.Endpoints...)
		}
	}
	f.AllModels = len(f.Models) == 0
	return f
}

// kubeModels are the model names (pool names and aliases) of the pools
// whose members come from an InferencePool; nil when none does.
func kubeModels(cfg Config) map[string]bool {
	var ms map[string]bool
	for _, p := range cfg.Pools {
		if p.InferencePool == "" {
			continue
		}
		if ms == nil {
			ms = map[string]bool{}
		}
		for _, m := range append([]string{p.Name}, p.Models...) {
			ms[m] = true
		}
	}
	return ms
}

// poolMember admits the relays of an InferencePool's current members: such
// a pool configures no endpoints, so without it every heartbeat and event
// of its Pods would be refused. r.pipe is read when a message arrives,
// after New has built it.
func (r *Router) poolMember(models map[string]bool) func(model, endpoint string) bool {
	return func(model, endpoint string) bool {
		return models[model] && r.pipe.pools.Member(model, endpoint)
	}
}

// warnEmptyMembership says so when static membership leaves the router
// nothing to route to: heartbeats cannot add endpoints in that mode.
func warnEmptyMembership(cfg Config, f subscriber.Follow, log interface{ Warn(string, ...any) }) {
	if len(cfg.Events.HeartbeatMembership) > 0 || f.Member != nil {
		return
	}
	for _, eps := range f.Endpoints {
		if len(eps) > 0 {
			return
		}
	}
	log.Warn("no pool lists endpoints and events.heartbeatMembership is empty: relay heartbeats will not " +
		"add any; list pools[].endpoints, or set events.heartbeatMembership on an authenticated bus")
}

// openEvents connects serve to NATS (an embedded server unless an external
// one is configured) and builds the subscriber and the prediction share;
// with events disabled it builds nothing.
func (r *Router) openEvents() error {
	ec := r.cfg.Events.WithDefaults()
	if ec.Disabled {
		if ec.Predictions.Share {
			r.log.Warn("events.predictions.share needs events; predictions stay local")
		}
		return nil
	}
	busMetrics, err := bus.NewMetrics(r.reg)
	if err != nil {
		return err
	}
	if r.bus, err = bus.Open(ec.Config, "warmroute-serve", busMetrics, r.log); err != nil {
		return err
	}
	if r.subMetrics, err = subscriber.NewMetrics(r.reg); err != nil {
		return err
	}
	f := follow(r.cfg)
	if km := kubeModels(r.cfg); km != nil {
		f.Member = r.poolMember(km)
	}
	warnEmptyMembership(r.cfg, f, r.log)
	if r.sub, err = subscriber.New(ec, f, r.bus.Conn(), r.subMetrics, r.log); err != nil {
		return fmt.Errorf("creating event subscriber: %w", err)
	}
	r.share, err = newShare(r.cfg, ec, r.bus.Conn(), r.reg, r.log)
	return err
}

// startEvents starts following the event streams into the index and pools,
// and sharing predictions, until ctx ends. The returned channel is closed
// once the index holds what the event stream retained (at once without
// JetStream or events).
func (r *Router) startEvents(ctx context.Context) (<-chan struct{}, error) {
	if r.sub == nil {
		done := make(chan struct{})
		close(done)
		return done, nil
	}
	sink := subscriber.NewIndexSink(r.pipe.index, r.subMetrics)
	if r.affinity != nil {
		// A restarted engine lost the responses it stored.
		r.sub.OnEngineRestart(func(src subscriber.Source) { r.affinity.EngineRestarted(src.Endpoint) })
	}
	if err := r.sub.Start(ctx, sink, subscriber.NewDiscovery(r.pipe.pools, sink, r.log)); err != nil {
		return nil, fmt.Errorf("starting event subscriber: %w", err)
	}
	if r.share != nil {
		if err := r.share.Start(ctx, r.pipe.index); err != nil {
			r.log.Error("prediction share stopped; predictions stay local", "err", err)
		}
	}
	if r.affinityShare != nil {
		if err := r.affinityShare.Start(ctx); err != nil {
			r.log.Error("affinity share stopped; response ids stay local", "err", err)
		}
	}
	return r.sub.Ready(), nil
}

// closeEvents stops the share and the subscriber, waiting for them, then
// closes NATS. Each Close is idempotent.
func (r *Router) closeEvents() {
	if r.affinityShare != nil {
		r.affinityShare.Close()
	}
	if r.share != nil {
		r.share.Close()
	}
	if r.sub != nil {
		r.sub.Close()
	}
	if r.bus != nil {
		r.bus.Close()
	}
}

// natsURL is the NATS URL serve uses (the embedded server's when it runs
// one); empty with events disabled.
func (r *Router) natsURL() string {
	if r.bus == nil {
		return ""
	}
	return r.bus.URL()
}

// busHealthy is nil unless events are configured and the bus has been down
// (unreachable, refusing the credentials or the TLS handshake) for longer
// than events.unreadyAfter; the error says for how long and why.
func (r *Router) busHealthy() error {
	if r.bus == nil {
		return nil
	}
	down, err := r.bus.Down()
	if err == nil || down <= r.cfg.Events.UnreadyAfter.D() {
		return nil
	}
	return fmt.Errorf("event bus down for %s: %w", down.Round(time.Millisecond), err)
}

// watchBus keeps readiness (/readyz and gRPC health) in step with the bus
// until the returned stop is called; stop waits for its goroutine.
// It sets readiness before it returns.
func (r *Router) watchBus(ctx context.Context) (stop func()) {
	was := r.busHealthy()
	r.setServing(was == nil)
	if was != nil {
		r.logUnready(was)
	} else {
		r.log.Info("warmroute ready")
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(busWatchInterval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			err := r.busHealthy()
			switch {
			case err != nil && was == nil:
				r.logUnready(err)
			case err == nil && was != nil:
				r.log.Info("warmroute ready: the event bus is back")
			}
			if (err == nil) != (was == nil) {
				r.setServing(err == nil)
			}
			was = err
		}
	}()
	return func() { cancel(); <-done }
}

func (r *Router) logUnready(err error) {
	r.log.Error("not ready: events are configured but the bus is down", "err", err,
		"limit", r.cfg.Events.UnreadyAfter.D())
}

// busWatchInterval is how often readiness looks at the bus: small beside
// any sensible events.unreadyAfter.
const busWatchInterval = 200 * time.Millisecond
