package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/buildinfo"
	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/events/relay"
	"github.com/warmroute/warmroute/internal/cli"
)

func init() {
	register("relay", subcommand{
		summary: "forward one engine's KV events from ZMQ to NATS (sidecar)",
		run:     runRelay,
	})
}

// relayFlags are the settings of `warmroute relay`.
type relayFlags struct {
	cfg       relay.Config
	nats      bus.ConnectOptions
	admin     string
	jetstream bool
	log       *cli.LogFlags
}

func newRelayFlagSet(stderr io.Writer) (*flag.FlagSet, *relayFlags) {
	fs := flag.NewFlagSet("relay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &relayFlags{}
	c, n := &f.cfg, &f.nats
	fs.StringVar(&c.EventsEndpoint, "zmq-url", "tcp://127.0.0.1:5557", "engine's ZMQ PUB endpoint")
	fs.BoolVar(&c.ListenEvents, "zmq-listen", false, "bind --zmq-url (when the engine connects)")
	fs.StringVar(&c.ReplayEndpoint, "replay-url", "", "engine's ZMQ replay ROUTER endpoint (empty: gaps reset)")
	fs.StringVar(&c.Topic, "topic", "", "ZMQ topic prefix to subscribe to")
	fs.StringVar(&c.Model, "model", "", "model name served by the engine (required)")
	fs.StringVar(&c.Endpoint, "endpoint-addr", "", "engine's HTTP ip:port as routed to (required)")
	fs.IntVar(&c.DPRank, "dp-rank", 0, "engine data-parallel rank of this stream")
	fs.IntVar(&c.BlockSize, "block-size", 0, "engine KV block size, reported in heartbeats")
	fs.StringVar(&c.MetricsURL, "engine-metrics-url", "", "engine /metrics URL to scrape load gauges from")
	fs.StringVar(&c.HealthURL, "engine-health-url", "", "engine /health URL; the engine counts as connected only while it answers 200")
	fs.DurationVar(&c.HeartbeatInterval, "heartbeat", relay.DefaultHeartbeatInterval, "heartbeat interval")
	fs.IntVar(&c.BufferSize, "buffer", relay.DefaultBuffer, "messages buffered while NATS is away")
	fs.IntVar(&c.MirrorMaxBlocks, "mirror-max-blocks", relay.DefaultMirrorMaxBlocks,
		"blocks the mirror of the engine keeps for snapshot requests (negative: no mirror, no snapshots)")
	fs.StringVar(&n.URL, "nats-url", "nats://127.0.0.1:4222", "NATS URL(s), comma-separated")
	fs.StringVar(&n.CredsFile, "nats-creds", "", "NATS credentials file")
	fs.StringVar(&n.NKeySeedFile, "nats-nkey", "", "NATS NKey seed file")
	fs.StringVar(&n.CAFile, "nats-ca", "", "NATS TLS CA file")
	fs.StringVar(&n.CertFile, "nats-cert", "", "NATS TLS client certificate")
	fs.StringVar(&n.KeyFile, "nats-key", "", "NATS TLS client key")
	fs.BoolVar(&f.jetstream, "jetstream", false, "create the JetStream stream ("+bus.DefaultStream+") routers replay events from")
	fs.DurationVar(&c.Stream.MaxAge, "jetstream-max-age", bus.DefaultMaxAge, "how long the stream retains events")
	fs.StringVar(&f.admin, "admin-addr", ":9091", "admin HTTP address for /metrics and /healthz (empty: off)")
	f.log = cli.AddLogFlags(fs)
	return fs, f
}

func runRelay(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs, f := newRelayFlagSet(stderr)
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	cfg := &f.cfg
	if f.jetstream {
		cfg.Stream.Name = bus.DefaultStream
	}
	if err := cfg.WithDefaults().Validate(); err != nil { // every setting is a flag
		return cli.AsUsage(fmt.Errorf("relay: %w", err))
	}
	log := f.log.Logger(stderr)
	reg := prometheus.NewRegistry()
	if _, err := buildinfo.NewMetrics(reg); err != nil {
		return err
	}
	busMetrics, err := bus.NewMetrics(reg)
	if err != nil {
		return err
	}
	f.nats.Name = "warmroute-relay " + cfg.Endpoint
	f.nats.Monitor = bus.NewMonitor(busMetrics, log)
	nc, err := f.nats.Connect()
	if err != nil {
		return err
	}
	defer nc.Close()
	f.nats.Monitor.Start(nc)
	defer f.nats.Monitor.Close()
	m, err := relay.NewMetrics(reg)
	if err != nil {
		return err
	}
	rl, err := relay.New(*cfg, nc, m, log)
	if err != nil {
		return err
	}
	if f.admin != "" {
		stop, err := relay.ServeAdmin(f.admin, reg, log)
		if err != nil {
			return err
		}
		defer stop()
	}
	log.Info("relay started", "zmq", cfg.EventsEndpoint, "model", cfg.Model, "endpoint", cfg.Endpoint)
	return rl.Run(ctx)
}
