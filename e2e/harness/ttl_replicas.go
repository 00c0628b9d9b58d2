package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/warmroute/warmroute/extproc"
	"github.com/warmroute/warmroute/router"

	"github.com/warmroute/warmroute/e2e/envoy"
	"github.com/warmroute/warmroute/scorer"
)

// ReplicaOptions configures a replica stack: a NATS process, event
// simulators with a relay each, two or more router replicas sharing their
// predictions over that NATS, and one Envoy whose ext_proc cluster holds
// every replica (round robin). Binary, Envoy, NATSD and Dir are required.
type ReplicaOptions struct {
	Binary, Envoy, NATSD, Dir string
	// JetStream retains events and predictions on the NATS process, so a
	// restarted replica replays the predictions still live.
	JetStream bool
	Tokenizer string // the pool's tokenizer.json directory (Qwen3ForTest)
	Replicas  int    // default 2
	Sims      int    // default 2
	SimArgs   []string
	// Configure edits every replica's configuration before it is written.
	Configure func(*router.Config)
}

// ReplicaStack is a running replica stack, made by StartReplicaStack.
// RestartRouter must not run concurrently with anything else; reading
// fields concurrently is fine.
type ReplicaStack struct {
	NATS      *NATS
	EventSims []*EventSim
	Relays    []*Relay
	Routers   []*Router
	Envoy     *Envoy
	Model     string
	opts      ReplicaOptions
}

// StartReplicaStack starts NATS, the simulators, the routers, the relays and
// Envoy, in that order, and waits until every router has heard every relay.
// On failure everything already started is stopped.
func StartReplicaStack(ctx context.Context, o ReplicaOptions) (*ReplicaStack, error) {
	if o.Binary == "" || o.Envoy == "" || o.NATSD == "" || o.Dir == "" {
		return nil, errors.New("starting replica stack: Binary, Envoy, NATSD and Dir are required")
	}
	if o.Replicas == 0 {
		o.Replicas = 2
	}
	if o.Sims == 0 {
		o.Sims = 2
	}
	rs := &ReplicaStack{Model: DefaultModel, opts: o}
	if err := rs.start(ctx); err != nil {
		return nil, errors.Join(err, rs.Close())
	}
	return rs, nil
}

func (rs *ReplicaStack) start(ctx context.Context) error {
	ports, err := FreePorts(1)
	if err != nil {
		return err
	}
	var js string
	if rs.opts.JetStream {
		js = filepath.Join(rs.opts.Dir, "jetstream")
		if err := os.MkdirAll(js, 0o755); err != nil {
			return fmt.Errorf("creating jetstream dir: %w", err)
		}
	}
	if rs.NATS, err = StartNATS(ctx, rs.opts.NATSD, rs.opts.Dir, ports[0], js); err != nil {
		return err
	}
	steps := []func(context.Context) error{rs.startSims, rs.startRouters, rs.startRelays, rs.startEnvoy}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (rs *ReplicaStack) startSims(ctx context.Context) error {
	o := rs.opts
	for i := range o.Sims {
		so := EventSimOptions{SimOptions: SimOptions{ID: fmt.Sprintf("sim-%d", i+1), Models: []string{rs.Model},
			Args: o.SimArgs}, Tokenizer: o.Tokenizer}
		s, err := StartEventSim(ctx, o.Binary, o.Dir, so)
		if err != nil {
			return err
		}
		rs.EventSims = append(rs.EventSims, s)
	}
	return nil
}

func (rs *ReplicaStack) startRouters(ctx context.Context) error {
	o := rs.opts
	pool := scorer.PoolConfig{Name: rs.Model, Tokenizer: scorer.TokenizerConfig{Dir: o.Tokenizer}}
	for _, s := range rs.EventSims {
		pool.Endpoints = append(pool.Endpoints, s.Addr)
	}
	for i := range o.Replicas {
		ports, err := FreePorts(2)
		if err != nil {
			return err
		}
		cfg := router.Config{GRPCAddr: Addr(ports[0]), AdminAddr: Addr(ports[1]), Pools: []scorer.PoolConfig{pool}}
		cfg.DecisionHeader = extproc.DecisionHeaderClient // tests read decisions from responses
		cfg.Index.BlockSize = DefaultBlockSize
		cfg.Events.URL = rs.NATS.URL()
		cfg.Events.JetStream.Enabled = o.JetStream
		cfg.Events.HeartbeatMisses = RouterHeartbeatMisses
		if o.Configure != nil {
			o.Configure(&cfg)
		}
		// Each replica gets its own directory: StartRouter names its
		// config and log file the same for every router.
		dir := filepath.Join(o.Dir, fmt.Sprintf("router-r%d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating router dir: %w", err)
		}
		r, err := StartRouter(ctx, o.Binary, dir, cfg, "--share-predictions")
		if err != nil {
			return err
		}
		rs.Routers = append(rs.Routers, r)
	}
	return nil
}

func (rs *ReplicaStack) startRelays(ctx context.Context) error {
	ports, err := FreePorts(len(rs.EventSims))
	if err != nil {
		return err
	}
	for i, s := range rs.EventSims {
		ro := RelayOptions{Model: rs.Model, NATS: rs.NATS.URL()}
		if rs.opts.JetStream {
			ro.JetStream = true
		}
		r, err := StartRelay(ctx, rs.opts.Binary, rs.opts.Dir, ports[i], s, ro)
		if err != nil {
			return err
		}
		rs.Relays = append(rs.Relays, r)
	}
	start := time.Now()
	for _, r := range rs.Routers {
		if err := rs.WaitSources(ctx, r, start); err != nil {
			return err
		}
	}
	return nil
}

// WaitSources waits until r has heard, from every relay, a heartbeat sent
// after since (see PrefixStack.WaitSources for why since matters).
func (rs *ReplicaStack) WaitSources(ctx context.Context, r *Router, since time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
	defer cancel()
	return PollMetric(ctx, r.MetricsURL(), r.Process, func(m Metrics) bool {
		for _, s := range rs.EventSims {
			age, ok := m.Value(RouterSourceHeartbeat, map[string]string{"endpoint": s.Addr})
			if !ok || time.Since(since).Seconds() <= age {
				return false
			}
		}
		return true
	})
}

func (rs *ReplicaStack) startEnvoy(ctx context.Context) error {
	ports, err := FreePorts(2)
	if err != nil {
		return err
	}
	var routerPorts []int
	for _, r := range rs.Routers {
		var p int
		if _, err := fmt.Sscanf(strings.TrimPrefix(r.GRPCAddr, "127.0.0.1:"), "%d", &p); err != nil {
			return fmt.Errorf("parsing router port of %s: %w", r.GRPCAddr, err)
		}
		routerPorts = append(routerPorts, p)
	}
	params := envoy.Params{ListenPort: ports[0], AdminPort: ports[1], RouterPort: routerPorts[0],
		ExtraRouterPorts: routerPorts[1:], AccessLog: true, SubsetHintHeader: true}
	rs.Envoy, err = StartEnvoy(ctx, rs.opts.Envoy, rs.opts.Dir, "envoy", envoy.FullDuplex, params, 1)
	return err
}

// URL returns the address of path on Envoy's listener.
func (rs *ReplicaStack) URL(path string) string { return rs.Envoy.URL(path) }

// RestartRouter stops router i and starts it again on the same ports and
// configuration, then waits until it has heard every relay again.
func (rs *ReplicaStack) RestartRouter(ctx context.Context, i int) error {
	r := rs.Routers[i]
	if err := r.Stop(); err != nil {
		return fmt.Errorf("stopping router r%d: %w", i, err)
	}
	if err := r.Restart(ctx); err != nil {
		return err
	}
	return rs.WaitSources(ctx, r, time.Now())
}

// Processes lists every running part: Envoy, routers, relays, simulators,
// then NATS.
func (rs *ReplicaStack) Processes() []*Process {
	var out []*Process
	if rs.Envoy != nil {
		out = append(out, rs.Envoy.Process)
	}
	for _, r := range rs.Routers {
		out = append(out, r.Process)
	}
	for _, r := range rs.Relays {
		out = append(out, r.Process)
	}
	for _, s := range rs.EventSims {
		out = append(out, s.Process)
	}
	if rs.NATS != nil {
		out = append(out, rs.NATS.Process)
	}
	return out
}

// Close stops Envoy, then routers, relays and simulators together, then
// NATS, and reports processes that had died on their own or would not stop.
func (rs *ReplicaStack) Close() error {
	ps := rs.Processes()
	var errs []error
	if rs.Envoy != nil {
		errs = append(errs, rs.Envoy.Stop())
		ps = ps[1:]
	}
	if rs.NATS != nil {
		ps = ps[:len(ps)-1]
	}
	errs = append(errs, stopAll(ps))
	if rs.NATS != nil {
		errs = append(errs, rs.NATS.Stop())
	}
	return errors.Join(errs...)
}

// Logs returns the last n lines of every process's log, for a failing test.
func (rs *ReplicaStack) Logs(n int) string {
	var b strings.Builder
	for _, p := range rs.Processes() {
		fmt.Fprintf(&b, "\n--- %s (%s, last %d lines) ---\n%s\n", p.Name(), p.LogPath(), n, p.Tail(n))
	}
	return b.String()
}
