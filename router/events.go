package router

import (
	"context"
	"fmt"

	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/events/subscriber"
)

// follow is what the subscriber follows: the configured models, or every
// model when no pool is configured so that discovery alone can populate the
// router.
func follow(cfg Config) subscriber.Follow {
	var f subscriber.Follow
	for _, p := range cfg.Pools {
		f.Models = append(append(f.Models, p.Name), p.Models...)
	}
	f.AllModels = len(f.Models) == 0
	return f
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
	if r.sub, err = subscriber.New(ec, follow(r.cfg), r.bus.Conn(), r.subMetrics, r.log); err != nil {
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
	if err := r.sub.Start(ctx, sink, subscriber.NewDiscovery(r.pipe.pools, sink, r.log)); err != nil {
		return nil, fmt.Errorf("starting event subscriber: %w", err)
	}
	if r.share != nil {
		if err := r.share.Start(ctx, r.pipe.index); err != nil {
			r.log.Error("prediction share stopped; predictions stay local", "err", err)
		}
	}
	return r.sub.Ready(), nil
}

// closeEvents stops the share and the subscriber, waiting for them, then
// closes NATS. Each Close is idempotent.
func (r *Router) closeEvents() {
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
