package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events"
	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/scorer"
)

// eventsRuntime is serve's event ingestion: an embedded NATS server unless an
// external one is configured, the connection, and the subscriber that applies
// engine events to the index and turns relay heartbeats into pool members.
// Build it with startEvents; Close stops it and waits. Its methods are safe
// for concurrent use.
type eventsRuntime struct {
	log      *slog.Logger
	embedded *events.EmbeddedServer
	tempDir  string // JetStream store created for this run, removed by Close
	nc       *nats.Conn
	sub      *events.Subscriber
	url      string
	cancel   context.CancelFunc
	done     chan struct{} // closed when the subscriber's Run returned
	close    sync.Once
}

// startEvents connects serve to its event streams (see api.EventsConfig) and
// starts following them into ix and pools until ctx ends or Close.
func startEvents(ctx context.Context, cfg api.ServeConfig, ix *index.Index, pools *scorer.Pools,
	reg prometheus.Registerer, log *slog.Logger) (*eventsRuntime, error) {
	ec := cfg.Events.WithDefaults()
	rt := &eventsRuntime{log: log, done: make(chan struct{})}
	if ec.Disabled {
		close(rt.done)
		return rt, nil
	}
	if err := rt.connect(ec); err != nil {
		rt.Close()
		return nil, err
	}
	sink := events.NewIndexSink(ix, reg)
	sub, err := events.NewSubscriber(subscriberConfig(cfg, ec), rt.nc, sink, events.NewDiscovery(pools, sink, log), reg, log)
	if err != nil {
		rt.Close()
		return nil, fmt.Errorf("starting event subscriber: %w", err)
	}
	if ec.JetStream.Enabled {
		rt.ensureStream(ctx, ec.JetStream)
	}
	rt.sub = sub
	runCtx, cancel := context.WithCancel(ctx)
	rt.cancel = cancel
	go func() {
		defer close(rt.done)
		if err := sub.Run(runCtx); err != nil {
			log.Error("kv event subscriber stopped", "err", err)
		}
	}()
	return rt, nil
}

// subscriberConfig follows the configured models, or every model when no
// pool is configured so that discovery alone can populate the router.
func subscriberConfig(cfg api.ServeConfig, ec api.EventsConfig) events.SubscriberConfig {
	sc := events.SubscriberConfig{QueueSize: ec.QueueSize, ExpireMisses: ec.HeartbeatMisses}
	for _, p := range cfg.Pools {
		sc.Models = append(append(sc.Models, p.Name), p.Models...)
	}
	sc.AllModels = len(sc.Models) == 0
	if ec.JetStream.Enabled {
		sc.ReplayStream = ec.JetStream.Stream
	}
	return sc
}

// connect starts the embedded server when no URL is configured, then dials.
func (rt *eventsRuntime) connect(ec api.EventsConfig) error {
	rt.url = ec.URL
	if rt.url == "" {
		if err := rt.startEmbedded(ec); err != nil {
			return err
		}
	}
	nc, err := events.ConnectOptions{URL: rt.url, Name: "warmroute-serve", CredsFile: ec.CredsFile,
		NKeySeedFile: ec.NKeySeedFile, CAFile: ec.TLS.CAFile, CertFile: ec.TLS.CertFile,
		KeyFile: ec.TLS.KeyFile}.Connect()
	if err != nil {
		return err
	}
	rt.nc = nc
	return nil
}

func (rt *eventsRuntime) startEmbedded(ec api.EventsConfig) error {
	host, portText, err := net.SplitHostPort(ec.Listen)
	if err != nil {
		return fmt.Errorf("starting embedded NATS on %q: %w", ec.Listen, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return fmt.Errorf("starting embedded NATS on %q: bad port: %w", ec.Listen, err)
	}
	opts := events.EmbeddedOptions{Host: host, Port: port}
	if ec.JetStream.Enabled {
		if opts.JetStreamDir, err = rt.storeDir(ec.JetStream.StoreDir); err != nil {
			return err
		}
	}
	if rt.embedded, err = events.StartEmbeddedWith(opts); err != nil {
		return err
	}
	rt.url = rt.embedded.ClientURL()
	rt.log.Info("embedded NATS started; point relays at it", "url", rt.url, "jetstream", ec.JetStream.Enabled)
	return nil
}

// storeDir returns dir, or a temporary directory that Close removes.
func (rt *eventsRuntime) storeDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	tmp, err := os.MkdirTemp("", "warmroute-jetstream-")
	if err != nil {
		return "", fmt.Errorf("creating JetStream store: %w", err)
	}
	rt.tempDir = tmp
	return tmp, nil
}

// ensureStream creates the stream before the subscriber replays it. A
// failure is logged, not fatal: the replay then fails, is counted, and the
// router follows live events as it would without a stream.
func (rt *eventsRuntime) ensureStream(ctx context.Context, js api.JetStreamConfig) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := events.EnsureStream(ctx, rt.nc, events.StreamConfig{Name: js.Stream, MaxAge: js.MaxAge.D()}); err != nil {
		rt.log.Warn("event stream unavailable; starting from live events", "stream", js.Stream, "err", err)
	}
}

// Ready is closed once the index holds what the stream retained (at once
// without JetStream, or with events disabled).
func (rt *eventsRuntime) Ready() <-chan struct{} {
	if rt.sub == nil {
		return rt.done
	}
	return rt.sub.Ready()
}

// Freshness reports the state of endpoint's event streams, for the
// scorer's freshness guard and the TTL controller; false when none is known.
func (rt *eventsRuntime) Freshness(endpoint string) (events.Freshness, bool) {
	if rt.sub == nil {
		return events.Freshness{}, false
	}
	return rt.sub.EndpointFreshness(endpoint)
}

// URL is the NATS URL serve uses (the embedded server's when it runs one).
func (rt *eventsRuntime) URL() string { return rt.url }

// Close stops the subscriber, waits for it, and shuts down NATS. It is
// idempotent.
func (rt *eventsRuntime) Close() {
	rt.close.Do(func() {
		if rt.cancel != nil {
			rt.cancel()
			<-rt.done
		}
		if rt.nc != nil {
			rt.nc.Close()
		}
		if rt.embedded != nil {
			rt.embedded.Close()
		}
		if rt.tempDir != "" {
			_ = os.RemoveAll(rt.tempDir)
		}
	})
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
	fs.StringVar(&o.URL, "nats-url", "", "external NATS URL(s), comma-separated (default: run an embedded server)")
	fs.StringVar(&o.CredsFile, "nats-creds", "", "NATS credentials file")
	fs.StringVar(&o.NKeySeedFile, "nats-nkey", "", "NATS NKey seed file")
	fs.StringVar(&o.TLS.CAFile, "nats-ca", "", "NATS TLS CA file")
	fs.StringVar(&o.TLS.CertFile, "nats-cert", "", "NATS TLS client certificate")
	fs.StringVar(&o.TLS.KeyFile, "nats-key", "", "NATS TLS client key")
	fs.StringVar(&o.Listen, "nats-addr", "", "embedded NATS listen address (default "+api.DefaultEventsListen+")")
	fs.BoolVar(&o.JetStream.Enabled, "jetstream", false, "retain events in a JetStream stream and replay it at start-up")
	fs.StringVar(&o.JetStream.Stream, "jetstream-stream", "", "JetStream stream name (default "+api.DefaultEventsStream+")")
	fs.DurationVar(&e.maxAge, "jetstream-max-age", 0, "how long the stream retains events (default 10m)")
	fs.StringVar(&o.JetStream.StoreDir, "jetstream-dir", "", "embedded JetStream store directory (default: temporary)")
	fs.IntVar(&o.QueueSize, "events-queue", 0, "messages queued between NATS and the index (default 65536)")
	fs.IntVar(&o.HeartbeatMisses, "heartbeat-misses", 0, "missed relay heartbeats before an endpoint expires (default 3)")
}

// apply copies flag name onto cfg; it reports false for other flags.
func (e *eventsFlags) apply(cfg *api.EventsConfig, name string) bool {
	o := e.o
	switch name {
	case "no-events":
		cfg.Disabled = o.Disabled
	case "nats-url":
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
	case "nats-addr":
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
