package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/e2e/envoy"
	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/router"
	"github.com/warmroute/warmroute/scorer"
)

// model is the one model every simulator serves.
const model = "compare-model"

// relaySettle is how long a run waits after its relays report their engine
// sockets connected: a few of their heartbeats (harness default 250ms), so
// the router knows every endpoint's freshness before the first request.
// (PUB/SUB drops what is published before a subscriber joins, and a relay
// takes the first sequence number it sees as the stream's start, so a relay
// that joined after the first request would lose those blocks for good.)
const relaySettle = 750 * time.Millisecond

// env is what every run shares: binaries and paths.
type env struct {
	Binary    string
	Envoy     string
	Tokenizer string // directory of tokenizer.json
	Dir       string // per-run directories are made under it
	Sims      int
	SimArgs   []string // the cost model, for every scenario
	Seed      uint64   // the workload seed, which also seeds simulator faults
}

// stack is one run's processes. The oracle's stack has no router, relays or
// Envoy: it sends to the simulators directly.
type stack struct {
	sims   []*harness.EventSim
	relays []*harness.Relay
	router *harness.Router
	envoy  *harness.Envoy
}

// simAddrs lists the simulators' host:port.
func (s *stack) simAddrs() []string {
	out := make([]string, len(s.sims))
	for i, sim := range s.sims {
		out[i] = sim.Addr
	}
	return out
}

// startStack starts the simulators of sc and, unless plan is Direct, a
// router configured by plan, one relay per simulator, and Envoy in front.
func startStack(ctx context.Context, e env, dir string, sc scenario, plan routerPlan) (*stack, error) {
	s := &stack{}
	err := s.start(ctx, e, dir, sc, plan)
	if err != nil {
		return nil, errors.Join(err, s.close())
	}
	return s, nil
}

func (s *stack) start(ctx context.Context, e env, dir string, sc scenario, plan routerPlan) error {
	ports, err := harness.FreePorts(e.Sims + 4)
	if err != nil {
		return err
	}
	for i := range e.Sims {
		if err := s.startSim(ctx, e, dir, sc, i); err != nil {
			return err
		}
	}
	if plan.Direct {
		return nil
	}
	cfg := routerConfig(e, plan, s.simAddrs(), ports[2], ports[3])
	if s.router, err = harness.StartRouter(ctx, e.Binary, dir, cfg); err != nil {
		return err
	}
	for i, sim := range s.sims {
		r, err := harness.StartRelay(ctx, e.Binary, dir, ports[4+i], sim,
			harness.RelayOptions{Model: model, NATS: "nats://" + s.router.NATSAddr})
		if err != nil {
			return err
		}
		s.relays = append(s.relays, r)
	}
	if !sleep(ctx, relaySettle) {
		return ctx.Err()
	}
	params := envoy.Params{ListenPort: ports[0], AdminPort: ports[1], RouterPort: ports[2]}
	s.envoy, err = harness.StartEnvoy(ctx, e.Envoy, dir, "envoy", envoy.FullDuplex, params, 1)
	return err
}

// startSim starts simulator i with KV events on, the real tokenizer, the
// cost model and the scenario's event flags.
func (s *stack) startSim(ctx context.Context, e env, dir string, sc scenario, i int) error {
	args := append([]string{"--prompt-tokens-details"}, e.SimArgs...)
	sim, err := harness.StartEventSim(ctx, e.Binary, dir, harness.EventSimOptions{
		SimOptions: harness.SimOptions{ID: "sim-" + strconv.Itoa(i+1), Models: []string{model},
			Args: append(append(args, sc.SimArgs...), sc.simArgs(i, e.Seed)...)},
		BlockSize: index.DefaultBlockSize, Tokenizer: e.Tokenizer})
	if err != nil {
		return err
	}
	s.sims = append(s.sims, sim)
	return nil
}

// indexGrace replaces the index's 10s grace (how long an expired
// prediction waits for a late confirmation before it counts as stale), so a
// run can read its stale expiries a few seconds after its last request. It
// still exceeds the slowest scenario's event latency.
const indexGrace = 2 * time.Second

func routerConfig(e env, plan routerPlan, sims []string, grpcPort, adminPort int) router.Config {
	pool := scorer.PoolConfig{Name: model, Endpoints: sims}
	if plan.Prefix {
		pool.Tokenizer = scorer.TokenizerConfig{Dir: e.Tokenizer}
	}
	cfg := router.Config{GRPCAddr: harness.Addr(grpcPort), AdminAddr: harness.Addr(adminPort),
		Pools: []scorer.PoolConfig{pool}, TTL: plan.TTL, Index: index.Config{Grace: api.Duration(indexGrace)}}
	cfg.Events.HeartbeatMisses = harness.RouterHeartbeatMisses
	return cfg
}

// stopRelays stops every relay now; close then has none left to stop.
func (s *stack) stopRelays() error {
	var errs []error
	for _, r := range s.relays {
		errs = append(errs, r.Stop())
	}
	s.relays = nil
	return errors.Join(errs...)
}

// close stops Envoy, then the relays and the router, then the simulators.
func (s *stack) close() error {
	var errs []error
	if s.envoy != nil {
		errs = append(errs, s.envoy.Stop())
	}
	for _, r := range s.relays {
		errs = append(errs, r.Stop())
	}
	if s.router != nil {
		errs = append(errs, s.router.Stop())
	}
	for _, sim := range s.sims {
		errs = append(errs, sim.Stop())
	}
	return errors.Join(errs...)
}

// runDir makes a fresh directory for one run's configs and logs.
func runDir(parent, scenario, policy string) (string, error) {
	d := filepath.Join(parent, scenario+"-"+policy)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", fmt.Errorf("making run directory: %w", err)
	}
	return d, nil
}
