package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/warmroute/warmroute/internal/cli"
	"github.com/warmroute/warmroute/router"
	"github.com/warmroute/warmroute/scorer"
)

// serveOnly are serve's flags that are not configuration settings: where
// the file is, how to log, and the tokenizer shorthand that needs the pools
// the other flags define.
type serveOnly struct {
	configPath string
	log        *cli.LogFlags
	tokenizers tokenizerFlag
	tokMode    string
}

// bindServeFlags binds every flag of `warmroute serve` straight into the
// field of cfg it sets, with that field's current value as the flag's
// default: bound to a file's configuration, a flag that is not given leaves
// the file's value; bound to the defaults, -h shows them.
func bindServeFlags(fs *flag.FlagSet, cfg *router.Config, o *serveOnly) {
	fs.StringVar(&o.configPath, "config", "", "YAML configuration file (every setting is in the README's reference)")
	o.log = cli.AddLogFlags(fs)
	bindServerFlags(fs, cfg)
	bindRoutingFlags(fs, cfg, o)
	bindEventFlags(fs, cfg)
	bindTTLFlags(fs, cfg)
}

func bindServerFlags(fs *flag.FlagSet, c *router.Config) {
	fs.StringVar(&c.GRPCAddr, "grpc-addr", c.GRPCAddr, "ext_proc gRPC listen address")
	fs.StringVar(&c.AdminAddr, "admin-addr", c.AdminAddr, "admin HTTP listen address (/metrics, /healthz, /readyz)")
	fs.StringVar(&c.DebugAddr, "debug-addr", c.DebugAddr, "debug HTTP listen address (/debug/index/*, /debug/ttl, /debug/pprof), or off")
	fs.BoolVar(&c.DebugPprof, "debug-pprof", c.DebugPprof, "serve net/http/pprof under /debug/pprof on the debug address")
	fs.StringVar(&c.TLS.CertFile, "tls-cert", c.TLS.CertFile, "PEM certificate for the gRPC listener")
	fs.StringVar(&c.TLS.KeyFile, "tls-key", c.TLS.KeyFile, "PEM private key for the gRPC listener")
	fs.BoolVar(&c.TLS.SelfSigned, "tls-self-signed", c.TLS.SelfSigned, "serve gRPC with a generated self-signed certificate (development)")
	fs.StringVar(&c.TLS.ClientCAFile, "tls-client-ca", c.TLS.ClientCAFile, "PEM CA bundle: require and verify a client certificate signed by it (mutual TLS)")
	fs.TextVar(&c.ShutdownGrace, "shutdown-grace", c.ShutdownGrace, "how long a graceful shutdown waits for open streams")
	fs.Int64Var(&c.MaxBodyBytes, "max-body-bytes", c.MaxBodyBytes, "largest accepted request body; larger gets 413")
	fs.Int64Var(&c.MaxBufferedBytes, "max-buffered-bytes", c.MaxBufferedBytes, "request body bytes all streams may hold at once; beyond it new bodies get 503")
	fs.TextVar(&c.DecisionHeader, "decision-header", c.DecisionHeader, "where x-warmroute-decision goes: upstream (the engine only), client (also client responses; debugging) or off")
}

func bindRoutingFlags(fs *flag.FlagSet, c *router.Config, o *serveOnly) {
	fs.Var(&endpointsFlag{pools: &c.Pools}, "endpoints", "MODEL=IP:PORT[,IP:PORT...]: a pool named MODEL (repeatable; replaces the file's pools)")
	fs.StringVar(&c.DefaultPool, "default-pool", c.DefaultPool, "pool for unknown models and requests without a model")
	fs.IntVar(&c.Fallbacks, "fallbacks", c.Fallbacks, "further endpoints listed after the chosen one")
	fs.Var(&o.tokenizers, "tokenizer", "POOL=DIR: tokenizer.json directory enabling prefix routing for POOL (repeatable)")
	fs.StringVar(&o.tokMode, "tokenizer-mode", "", "mode for --tokenizer pools: local, remote or drift (default local)")
	fs.IntVar(&c.Index.BlockSize, "block-size", c.Index.BlockSize, "engines' KV block size in tokens")
	fs.Int64Var(&c.Index.MaxBytes, "index-max-bytes", c.Index.MaxBytes, "prefix index memory bound in bytes")
	fs.TextVar(&c.Index.Grace, "index-grace", c.Index.Grace, "how long expired predictions wait for a late confirmation")
	s := &c.Scoring
	fs.Var(weightFlag{&s.PrefixWeight}, "prefix-weight", "weight of the cached-prefix score")
	fs.Var(weightFlag{&s.LoadWeight}, "load-weight", "weight of router-tracked load")
	fs.Var(weightFlag{&s.EngineLoadWeight}, "engine-load-weight", "weight of engine load gauges")
	fs.Var(weightFlag{&s.HerdMargin}, "herd-margin", "in-flight requests above the least loaded before a prefix is discounted")
	fs.Var(weightFlag{&s.TieEpsilon}, "tie-epsilon", "scores within this of the best are chosen among at random")
}

func bindEventFlags(fs *flag.FlagSet, c *router.Config) {
	e := &c.Events
	fs.BoolVar(&e.Disabled, "no-events", e.Disabled, "do not ingest KV events (no NATS, no discovery)")
	fs.StringVar(&e.URL, "nats-url", e.URL, "external NATS URL(s), comma-separated (default: run an embedded server)")
	fs.StringVar(&e.CredsFile, "nats-creds", e.CredsFile, "NATS credentials file")
	fs.StringVar(&e.NKeySeedFile, "nats-nkey", e.NKeySeedFile, "NATS NKey seed file")
	fs.StringVar(&e.TLS.CAFile, "nats-ca", e.TLS.CAFile, "NATS TLS CA file")
	fs.StringVar(&e.TLS.CertFile, "nats-cert", e.TLS.CertFile, "NATS TLS client certificate")
	fs.StringVar(&e.TLS.KeyFile, "nats-key", e.TLS.KeyFile, "NATS TLS client key")
	fs.StringVar(&e.Listen, "nats-addr", e.Listen, "embedded NATS listen address")
	fs.StringVar(&e.Server.Config, "nats-server-config", e.Server.Config, "nats-server config file whose authorization and tls the embedded NATS uses")
	fs.BoolVar(&e.Server.Insecure, "nats-insecure", e.Server.Insecure, "allow the embedded NATS on a non-loopback address without authentication")
	fs.TextVar(&e.UnreadyAfter, "nats-unready-after", e.UnreadyAfter, "how long NATS may be down or refusing the router before it reports not ready")
	fs.BoolVar(&e.JetStream.Enabled, "jetstream", e.JetStream.Enabled, "retain events in a JetStream stream and replay it at start-up")
	fs.TextVar(&e.JetStream.MaxAge, "jetstream-max-age", e.JetStream.MaxAge, "how long the stream retains events")
	fs.StringVar(&e.JetStream.StoreDir, "jetstream-dir", e.JetStream.StoreDir, "embedded JetStream store directory (default: temporary)")
	fs.IntVar(&e.HeartbeatMisses, "heartbeat-misses", e.HeartbeatMisses, "missed relay heartbeats before an endpoint is judged silent and expires")
	fs.BoolVar(&e.Predictions.Share, "share-predictions", e.Predictions.Share,
		"share speculative predictions with the other router replicas over NATS (turn on for every replica)")
}

func bindTTLFlags(fs *flag.FlagSet, c *router.Config) {
	t := &c.TTL
	fs.TextVar(&t.Mode, "ttl-mode", t.Mode, "speculative TTL mode: static, advise or adaptive")
	fs.TextVar(&t.Static, "ttl", t.Static, "static speculative TTL, and the adaptive starting value")
	fs.StringVar(&t.Percentile, "ttl-percentile", t.Percentile, "confirmation latency percentile the TTL covers: p95, p99, max")
	fs.TextVar(&t.Jitter, "ttl-jitter", t.Jitter, "slack added to the percentile with the observed backlog; also the adaptive floor and dead band")
	fs.TextVar(&t.MaxStale, "ttl-max-stale", t.MaxStale, "cap on the TTL: the longest a failed prediction may steer routing")
	fs.IntVar(&t.MinSamples, "ttl-min-samples", t.MinSamples, "confirmations before advice (and resolved blocks before trust) is believed")
	fs.TextVar(&t.Interval, "ttl-interval", t.Interval, "how often advice is recomputed and an adaptive TTL moved")
	fs.TextVar(&t.Step, "ttl-step", t.Step, "largest adaptive move per interval")
}

// parseServeConfig reads the file named by --config, applies the flags that
// were given, fills defaults and validates. Problems with the command line
// are usage errors; so is an invalid configuration when every setting came
// from the command line.
func parseServeConfig(args []string, stderr io.Writer) (router.Config, *cli.LogFlags, error) {
	cfg, o, err := loadServeConfig(args, stderr)
	if err != nil {
		return router.Config{}, nil, err
	}
	if err := cfg.Validate(); err != nil {
		err = fmt.Errorf("invalid configuration: %w", err)
		if o.configPath == "" {
			err = cli.AsUsage(err)
		}
		return router.Config{}, nil, err
	}
	return cfg.WithDefaults(), o.log, nil
}

// loadServeConfig is parseServeConfig before validation and defaults. Flags
// are parsed twice: first to find the file (and report usage errors, with
// the defaults shown by -h), then bound into the file's configuration so
// that only the flags given override it.
func loadServeConfig(args []string, stderr io.Writer) (router.Config, *serveOnly, error) {
	shown := router.Config{}.WithDefaults()
	fs, first := newServeFlagSet(stderr, &shown)
	if err := cli.ParseFlags(fs, args); err != nil {
		return router.Config{}, nil, err
	}
	var cfg router.Config
	if first.configPath != "" {
		var err error
		if cfg, err = router.Load(first.configPath); err != nil {
			return router.Config{}, nil, err
		}
	}
	fs, o := newServeFlagSet(io.Discard, &cfg)
	if err := cli.ParseFlags(fs, args); err != nil { // parsed once already: cannot fail
		return router.Config{}, nil, err
	}
	if err := applyTokenizerFlags(&cfg, o); err != nil {
		return router.Config{}, nil, cli.AsUsage(err)
	}
	return cfg, o, nil
}

func newServeFlagSet(stderr io.Writer, cfg *router.Config) (*flag.FlagSet, *serveOnly) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &serveOnly{}
	bindServeFlags(fs, cfg, o)
	return fs, o
}

// applyTokenizerFlags runs after every other flag, so --tokenizer applies to
// the pools that --endpoints defined whatever the flags' order.
func applyTokenizerFlags(cfg *router.Config, o *serveOnly) error {
	for pool, dir := range o.tokenizers {
		i := slices.IndexFunc(cfg.Pools, func(pc scorer.PoolConfig) bool { return pc.Name == pool })
		if i < 0 {
			return fmt.Errorf("--tokenizer %s: no such pool", pool)
		}
		cfg.Pools[i].Tokenizer.Dir = dir
		if o.tokMode != "" {
			cfg.Pools[i].Tokenizer.Mode = o.tokMode
		}
	}
	return nil
}

// endpointsFlag binds repeated --endpoints MODEL=IP:PORT,IP:PORT values to
// the pools: the first replaces the file's pools, later ones add pools.
type endpointsFlag struct {
	pools *[]scorer.PoolConfig
	set   bool
}

func (f *endpointsFlag) String() string {
	if f.pools == nil {
		return ""
	}
	names := make([]string, len(*f.pools))
	for i, p := range *f.pools {
		names[i] = p.Name + "=" + strings.Join(p.Endpoints, ",")
	}
	return strings.Join(names, " ")
}

func (f *endpointsFlag) Set(v string) error {
	name, list, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("want MODEL=IP:PORT[,IP:PORT...], got %q", v)
	}
	var eps []string
	for ep := range strings.SplitSeq(list, ",") {
		if ep = strings.TrimSpace(ep); ep != "" {
			eps = append(eps, ep)
		}
	}
	if !f.set {
		*f.pools, f.set = nil, true
	}
	*f.pools = append(*f.pools, scorer.PoolConfig{Name: name, Endpoints: eps})
	return nil
}

// tokenizerFlag collects repeated --tokenizer POOL=DIR values.
type tokenizerFlag map[string]string

func (f *tokenizerFlag) String() string { return fmt.Sprint(map[string]string(*f)) }

func (f *tokenizerFlag) Set(v string) error {
	pool, dir, ok := strings.Cut(v, "=")
	if !ok || pool == "" || dir == "" {
		return fmt.Errorf("want POOL=DIR, got %q", v)
	}
	if *f == nil {
		*f = tokenizerFlag{}
	}
	(*f)[pool] = dir
	return nil
}

// weightFlag binds an optional scoring weight: nil is the default, and an
// explicit 0 is kept.
type weightFlag struct{ p **float64 }

func (f weightFlag) String() string {
	if f.p == nil || *f.p == nil {
		return ""
	}
	return strconv.FormatFloat(**f.p, 'g', -1, 64)
}

func (f weightFlag) Set(v string) error {
	x, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return fmt.Errorf("want a number, got %q", v)
	}
	*f.p = scorer.Float(x)
	return nil
}
