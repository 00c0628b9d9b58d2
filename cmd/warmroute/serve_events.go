package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"time"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/events/subscriber"
)

// eventsConfig reads the file's events section into subscriber.Config, the
// type that owns it. api declares the section only because ServeConfig lives
// there and cannot import the events packages; the two share JSON names, so
// a JSON round trip converts (TestEventsConfigKeepsEveryField proves it).
func eventsConfig(c api.EventsConfig) (subscriber.Config, error) {
	var out subscriber.Config
	b, err := json.Marshal(c)
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil {
		return out, fmt.Errorf("reading events configuration: %w", err)
	}
	return out, nil
}

// follow is what the subscriber follows: the configured models, or every
// model when no pool is configured so that discovery alone can populate the
// router.
func follow(cfg api.ServeConfig) subscriber.Follow {
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
func (r *router) openEvents() error {
	ec, err := eventsConfig(r.cfg.Events)
	if err != nil {
		return err
	}
	if ec.Disabled {
		if ec.Predictions.Share {
			r.log.Warn("events.predictions.share needs events; predictions stay local")
		}
		return nil
	}
	if r.bus, err = bus.Open(ec.Config, "warmroute-serve", r.log); err != nil {
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
func (r *router) startEvents(ctx context.Context) (<-chan struct{}, error) {
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
func (r *router) closeEvents() {
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
func (r *router) natsURL() string {
	if r.bus == nil {
		return ""
	}
	return r.bus.URL()
}

// eventsFlags are serve's event flags; like every serve flag, a flag that is
// given overrides the configuration file.
type eventsFlags struct {
	o      api.EventsConfig
	maxAge time.Duration
}

func (e *eventsFlags) register(fs *flag.FlagSet) {
	o := &e.o
	fs.BoolVar(&o.Disabled, "no-events", false, "do not ingest KV events (no NATS, no discovery)")
	fs.StringVar(&o.URL, "nats", "", "external NATS URL(s), comma-separated (default: run an embedded server)")
	fs.StringVar(&o.CredsFile, "nats-creds", "", "NATS credentials file")
	fs.StringVar(&o.NKeySeedFile, "nats-nkey", "", "NATS NKey seed file")
	fs.StringVar(&o.TLS.CAFile, "nats-ca", "", "NATS TLS CA file")
	fs.StringVar(&o.TLS.CertFile, "nats-cert", "", "NATS TLS client certificate")
	fs.StringVar(&o.TLS.KeyFile, "nats-key", "", "NATS TLS client key")
	fs.StringVar(&o.Listen, "nats-listen", "", "embedded NATS listen address (default "+bus.DefaultListen+")")
	fs.BoolVar(&o.JetStream.Enabled, "jetstream", false, "retain events in a JetStream stream and replay it at start-up")
	fs.StringVar(&o.JetStream.Stream, "jetstream-stream", "", "JetStream stream name (default "+bus.DefaultStream+")")
	fs.DurationVar(&e.maxAge, "jetstream-max-age", 0, "how long the stream retains events (default "+bus.DefaultMaxAge.String()+")")
	fs.StringVar(&o.JetStream.StoreDir, "jetstream-dir", "", "embedded JetStream store directory (default: temporary)")
	fs.IntVar(&o.QueueSize, "events-queue", 0, fmt.Sprintf("messages queued between NATS and the index (default %d)", subscriber.DefaultQueueSize))
	fs.IntVar(&o.HeartbeatMisses, "heartbeat-misses", 0, fmt.Sprintf("missed relay heartbeats before an endpoint expires and speculation on it pauses (default %d)",
		subscriber.DefaultHeartbeatMisses))
}

// apply copies flag name onto cfg; it reports false for other flags.
func (e *eventsFlags) apply(cfg *api.EventsConfig, name string) bool {
	o := e.o
	switch name {
	case "no-events":
		cfg.Disabled = o.Disabled
	case "nats":
		cfg.URL = o.URL
	case "nats-creds":
		cfg.CredsFile = o.CredsFile
	case "nats-nkey":
		cfg.NKeySeedFile = o.NKeySeedFile
	case "nats-ca":
		cfg.TLS.CAFile = o.TLS.CAFile
	case "nats-cert":
		cfg.TLS.CertFile = o.TLS.CertFile
	case "nats-key":
		cfg.TLS.KeyFile = o.TLS.KeyFile
	case "nats-listen":
		cfg.Listen = o.Listen
	case "jetstream":
		cfg.JetStream.Enabled = o.JetStream.Enabled
	case "jetstream-stream":
		cfg.JetStream.Stream = o.JetStream.Stream
	case "jetstream-max-age":
		cfg.JetStream.MaxAge = api.Duration(e.maxAge)
	case "jetstream-dir":
		cfg.JetStream.StoreDir = o.JetStream.StoreDir
	case "events-queue":
		cfg.QueueSize = o.QueueSize
	case "heartbeat-misses":
		cfg.HeartbeatMisses = o.HeartbeatMisses
	default:
		return false
	}
	return true
}
