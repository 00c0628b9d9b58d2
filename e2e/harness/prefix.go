package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/warmroute/warmroute/extproc"
	"github.com/warmroute/warmroute/router"

	"github.com/warmroute/warmroute/e2e/envoy"
	"github.com/warmroute/warmroute/scorer"
)

// PrefixOptions configures a prefix-routing stack: event-publishing
// simulators, a relay each, a router that tokenizes for the pool, and Envoy.
// Binary, Envoy and Dir are required; other zero fields have defaults.
type PrefixOptions struct {
	Binary, Envoy, Dir string
	// NATSD, when set (BuildNATSD), runs NATS as its own process that tests
	// can kill; otherwise relays publish to the router's embedded server.
	NATSD string
	// NATSConfig, with NATSD, writes the nats-server configuration file
	// (authorization, tls) the server runs with, once the simulators'
	// addresses are known, and returns its path.
	NATSConfig func(sims []*EventSim) (string, error)
	// RelayURL, when set, gives relay i (index-aligned with the
	// simulators) its NATS URL, for instance with its own credentials.
	RelayURL func(i int, url string) string
	// JetStream retains events in a stream (on the NATSD server) that a
	// restarted router replays. It needs NATSD: the router's embedded store
	// dies with it.
	JetStream bool
	// Tokenizer is the pool's tokenizer.json directory (Qwen3ForTest), used
	// by the simulators and the router alike.
	Tokenizer string
	Model     string // pool name; default DefaultModel
	Sims      int    // default 3
	BlockSize int    // default DefaultBlockSize
	NumBlocks int    // simulator cache size; zero keeps the simulator's
	SimArgs   []string
	// Roles, index-aligned with the simulators, makes a prefill/decode
	// pool: simulator i runs with --role Roles[i] and is the pool's endpoint
	// with that role ("" both).
	Roles     []string
	RelayArgs []string
	// Configure edits the router configuration before it is written (TTL,
	// heartbeat misses, scoring).
	Configure  func(*router.Config)
	RouterArgs []string
	// EnvoyConcurrency defaults to 1.
	EnvoyConcurrency int
	// ListenPort is Envoy's listener port on 127.0.0.1; 0 picks a free one.
	ListenPort int
}

// PrefixStack is a running prefix-routing stack. Its embedded Stack holds
// the simulators (as Sims), the router and Envoy; EventSims and Relays are
// index-aligned with Stack.Sims. The same concurrency rules as Stack apply.
type PrefixStack struct {
	*Stack
	EventSims []*EventSim
	Relays    []*Relay
	NATS      *NATS // nil with the router's embedded server
	Model     string
	opts      PrefixOptions
}

// StartPrefixStack starts, in order: the simulators, NATS (when NATSD is
// set), the router, one relay per simulator, then Envoy. On failure
// everything already started is stopped.
func StartPrefixStack(ctx context.Context, o PrefixOptions) (*PrefixStack, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	ps := &PrefixStack{Stack: &Stack{}, Model: o.Model, opts: o}
	if err := ps.start(ctx); err != nil {
		return nil, errors.Join(err, ps.Close())
	}
	return ps, nil
}

func (o PrefixOptions) withDefaults() (PrefixOptions, error) {
	if o.Binary == "" || o.Envoy == "" || o.Dir == "" {
		return o, errors.New("starting prefix stack: Binary, Envoy and Dir are required")
	}
	if o.JetStream && o.NATSD == "" {
		return o, errors.New("starting prefix stack: JetStream needs NATSD")
	}
	if o.Model == "" {
		o.Model = DefaultModel
	}
	if o.Sims == 0 {
		o.Sims = 3
	}
	if o.BlockSize == 0 {
		o.BlockSize = DefaultBlockSize
	}
	if o.EnvoyConcurrency == 0 {
		o.EnvoyConcurrency = 1
	}
	return o, nil
}

func (ps *PrefixStack) start(ctx context.Context) error {
	if err := ps.startSims(ctx); err != nil {
		return err
	}
	if err := ps.startNATS(ctx); err != nil {
		return err
	}
	if err := ps.startRouter(ctx); err != nil {
		return err
	}
	if err := ps.startRelays(ctx); err != nil {
		return err
	}
	return ps.startEnvoy(ctx)
}

func (ps *PrefixStack) startNATS(ctx context.Context) error {
	if ps.opts.NATSD == "" {
		return nil
	}
	ports, err := FreePorts(1)
	if err != nil {
		return err
	}
	var js string
	if ps.opts.JetStream {
		js = filepath.Join(ps.opts.Dir, "jetstream")
		if err := os.MkdirAll(js, 0o755); err != nil {
			return fmt.Errorf("creating jetstream dir: %w", err)
		}
	}
	var conf string
	if ps.opts.NATSConfig != nil {
		if conf, err = ps.opts.NATSConfig(ps.EventSims); err != nil {
			return fmt.Errorf("writing nats config: %w", err)
		}
	}
	ps.NATS, err = StartNATSConfig(ctx, ps.opts.NATSD, ps.opts.Dir, ports[0], js, conf)
	return err
}

func (ps *PrefixStack) startSims(ctx context.Context) error {
	o := ps.opts
	for i := range o.Sims {
		so := EventSimOptions{SimOptions: SimOptions{ID: fmt.Sprintf("sim-%d", i+1), Models: []string{o.Model},
			Args: o.simArgs(i)}, BlockSize: o.BlockSize, NumBlocks: o.NumBlocks, Tokenizer: o.Tokenizer}
		s, err := StartEventSim(ctx, o.Binary, o.Dir, so)
		if err != nil {
			return err
		}
		ps.EventSims = append(ps.EventSims, s)
		ps.Sims = append(ps.Sims, s.Sim)
	}
	return nil
}

// simArgs are simulator i's arguments: SimArgs, and its role.
func (o PrefixOptions) simArgs(i int) []string {
	if i >= len(o.Roles) || o.Roles[i] == "" {
		return o.SimArgs
	}
	return append(slices.Clone(o.SimArgs), "--role", o.Roles[i])
}

func (ps *PrefixStack) routerConfig(ports []int) router.Config {
	o := ps.opts
	pool := scorer.PoolConfig{Name: o.Model, Tokenizer: scorer.TokenizerConfig{Dir: o.Tokenizer}}
	for i, s := range ps.EventSims {
		pool.Endpoints = append(pool.Endpoints, s.Addr)
		if i < len(o.Roles) && o.Roles[i] != "" {
			if pool.Roles == nil {
				pool.Roles = map[string]scorer.Role{}
			}
			// Roles are the simulators' own names, which RoleOf accepts.
			pool.Roles[s.Addr], _ = scorer.RoleOf(o.Roles[i])
		}
	}
	cfg := router.Config{GRPCAddr: Addr(ports[0]), AdminAddr: Addr(ports[1]), Pools: []scorer.PoolConfig{pool}}
	// Prefix tests read each decision from its response: opt in to the
	// debugging copy that production keeps off.
	cfg.DecisionHeader = extproc.DecisionHeaderClient
	cfg.Index.BlockSize = o.BlockSize
	if ps.NATS != nil {
		cfg.Events.URL = ps.NATS.URL()
	}
	cfg.Events.JetStream.Enabled = o.JetStream
	cfg.Events.HeartbeatMisses = RouterHeartbeatMisses
	if o.Configure != nil {
		o.Configure(&cfg)
	}
	return cfg
}

func (ps *PrefixStack) startRouter(ctx context.Context) error {
	ports, err := FreePorts(2)
	if err != nil {
		return err
	}
	ps.Router, err = StartRouter(ctx, ps.opts.Binary, ps.opts.Dir, ps.routerConfig(ports), ps.opts.RouterArgs...)
	return err
}

// NATSURL is the server relays publish to.
func (ps *PrefixStack) NATSURL() string {
	if ps.NATS != nil {
		return ps.NATS.URL()
	}
	return "nats://" + ps.Router.NATSAddr
}

func (ps *PrefixStack) startRelays(ctx context.Context) error {
	ports, err := FreePorts(len(ps.EventSims))
	if err != nil {
		return err
	}
	for i, s := range ps.EventSims {
		ro := RelayOptions{Model: ps.Model, NATS: ps.NATSURL(), Args: ps.opts.RelayArgs}
		if ps.opts.RelayURL != nil {
			ro.NATS = ps.opts.RelayURL(i, ro.NATS)
		}
		if ps.opts.JetStream {
			ro.JetStream = true
		}
		r, err := StartRelay(ctx, ps.opts.Binary, ps.opts.Dir, ports[i], s, ro)
		if err != nil {
			return err
		}
		ps.Relays = append(ps.Relays, r)
	}
	// Every relay reported its engine connected by now.
	return ps.WaitSources(ctx, time.Now())
}

// RouterSourceHeartbeat is the router's per-source heartbeat age gauge; a
// source appears once its first heartbeat arrived.
const RouterSourceHeartbeat = "warmroute_events_source_heartbeat_age_seconds"

// WaitSources waits until the router has heard, from every relay, a
// heartbeat sent after since. Pass a time at which every relay's engine
// socket was already connected: a relay's first heartbeat can precede its
// connection, and a router that last heard "engine disconnected" pauses
// speculation for that endpoint (the freshness guard).
func (ps *PrefixStack) WaitSources(ctx context.Context, since time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
	defer cancel()
	return PollMetric(ctx, ps.Router.MetricsURL(), ps.Router.Process, func(m Metrics) bool {
		for _, s := range ps.EventSims {
			age, ok := m.Value(RouterSourceHeartbeat, map[string]string{"endpoint": s.Addr})
			if !ok || time.Since(since).Seconds() <= age {
				return false
			}
		}
		return true
	})
}

func (ps *PrefixStack) startEnvoy(ctx context.Context) error {
	ports, err := FreePorts(2)
	if err != nil {
		return err
	}
	_, grpcPort, _ := strings.Cut(ps.Router.GRPCAddr, "127.0.0.1:")
	rp, err := strconv.Atoi(grpcPort)
	if err != nil {
		return fmt.Errorf("parsing router port: %w", err)
	}
	listen := ports[0]
	if ps.opts.ListenPort != 0 {
		listen = ps.opts.ListenPort
	}
	params := envoy.Params{ListenPort: listen, AdminPort: ports[1], RouterPort: rp, AccessLog: true, SubsetHintHeader: true}
	ps.Envoy, err = StartEnvoy(ctx, ps.opts.Envoy, ps.opts.Dir, "envoy", envoy.FullDuplex, params, ps.opts.EnvoyConcurrency)
	return err
}

// Processes lists every running part: simulators, router, Envoy, relays,
// then NATS.
func (ps *PrefixStack) Processes() []*Process {
	out := ps.Stack.Processes()
	for _, r := range ps.Relays {
		out = append(out, r.Process)
	}
	if ps.NATS != nil {
		out = append(out, ps.NATS.Process)
	}
	return out
}

// Close stops Envoy, then the relays, router and simulators, then NATS, and
// reports the processes that had died on their own or would not stop.
func (ps *PrefixStack) Close() error {
	errs := []error{}
	if ps.Envoy != nil {
		errs = append(errs, ps.Envoy.Stop())
	}
	var rest []*Process
	for _, r := range ps.Relays {
		rest = append(rest, r.Process)
	}
	for _, s := range ps.Sims {
		rest = append(rest, s.Process)
	}
	if ps.Router != nil {
		rest = append(rest, ps.Router.Process)
	}
	errs = append(errs, stopAll(rest))
	if ps.NATS != nil {
		errs = append(errs, ps.NATS.Stop())
	}
	return errors.Join(errs...)
}

func stopAll(ps []*Process) error {
	results := make(chan error, len(ps))
	for _, p := range ps {
		go func() { results <- p.Stop() }()
	}
	var errs []error
	for range ps {
		errs = append(errs, <-results)
	}
	return errors.Join(errs...)
}

// Logs returns the last n lines of every process's log, for a failing test.
func (ps *PrefixStack) Logs(n int) string {
	var b strings.Builder
	for _, p := range ps.Processes() {
		fmt.Fprintf(&b, "\n--- %s (%s, last %d lines) ---\n%s\n", p.Name(), p.LogPath(), n, p.Tail(n))
	}
	return b.String()
}
