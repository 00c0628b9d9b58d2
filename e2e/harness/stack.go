package harness

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/warmroute/warmroute/e2e/envoy"
	"github.com/warmroute/warmroute/extproc"
	"github.com/warmroute/warmroute/router"
	"github.com/warmroute/warmroute/scorer"
)

// DefaultModel is the model every simulator serves unless told otherwise.
const DefaultModel = "e2e-model"

// Options configures a Stack. Binary, Envoy and Dir are required; every
// other zero field has a default, so the zero value plus those three works.
type Options struct {
	Binary string // the warmroute binary (BuildWarmroute)
	Envoy  string // the Envoy binary (FindEnvoy)
	Dir    string // configs and logs; the caller owns and removes it

	// Sims defaults to three simulators, sim-1..sim-3, serving Model. Empty
	// IDs and Models are filled in the same way.
	Sims []SimOptions
	// Model names the pool of all simulators. Default DefaultModel.
	Model string
	// ExtraPools are added to the router configuration after the pool of
	// all simulators (for example an empty pool, to provoke a 503).
	ExtraPools []scorer.PoolConfig
	// DefaultPool is the router's defaultPool. With it empty and a single
	// pool, requests without a model still go to that pool, while unknown
	// models get 404.
	DefaultPool string
	// MaxBodyBytes is the router's --max-body-bytes; zero keeps its default.
	MaxBodyBytes int64
	// MaxModelLen is the maxModelLen of the pool of all simulators; zero
	// leaves it unknown.
	MaxModelLen int
	// RouterArgs are appended to `warmroute serve`'s flags.
	RouterArgs []string
	// DecisionHeader is the router's decisionHeader; empty keeps its
	// default (upstream: clients never see the decision).
	DecisionHeader extproc.DecisionHeaderMode
	// RouterTLS is the router's ext_proc TLS (tls.*) and EnvoyTLS Envoy's
	// side of it; both zero means plaintext.
	RouterTLS router.TLSConfig
	EnvoyTLS  *envoy.UpstreamTLS

	// Template is the Envoy configuration: envoy.FullDuplex (default) or
	// envoy.Buffered.
	Template envoy.Template
	// ListenPort fixes Envoy's listener port; zero picks a free one.
	ListenPort int
	// EnvoyConcurrency is Envoy's worker thread count. Default 1.
	EnvoyConcurrency int
	// Fallbacks is the router's fallbacks. Above zero, Envoy's model servers
	// are the simulators as a STATIC cluster behind the override_host
	// policy, with one retry per fallback (envoy.Params.ModelServers).
	Fallbacks int
	// AccessLog and SubsetHintHeader are passed to the Envoy template.
	AccessLog        bool
	SubsetHintHeader bool
}

// Stack is simulators, one router and one Envoy in front of them, all
// running; make it with StartStack. Reading its fields concurrently is fine;
// Close and Router.Restart must not run concurrently with anything else.
type Stack struct {
	Sims   []*Sim
	Router *Router
	Envoy  *Envoy
	opts   Options
}

// StartStack starts the simulators, the router and Envoy, in that order,
// each waited for. On failure everything already started is stopped again.
func StartStack(ctx context.Context, o Options) (*Stack, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	ports, err := FreePorts(len(o.Sims) + 4)
	if err != nil {
		return nil, err
	}
	if o.ListenPort != 0 {
		ports[0] = o.ListenPort
	}
	s := &Stack{opts: o}
	if err := s.start(ctx, ports); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	return s, nil
}

func (o Options) withDefaults() (Options, error) {
	if o.Binary == "" || o.Envoy == "" || o.Dir == "" {
		return o, errors.New("starting stack: Binary, Envoy and Dir are required")
	}
	if o.Model == "" {
		o.Model = DefaultModel
	}
	if o.Sims == nil {
		o.Sims = make([]SimOptions, 3)
	}
	for i := range o.Sims {
		if o.Sims[i].ID == "" {
			o.Sims[i].ID = fmt.Sprintf("sim-%d", i+1)
		}
		if o.Sims[i].Models == nil {
			o.Sims[i].Models = []string{o.Model}
		}
	}
	if o.Template == "" {
		o.Template = envoy.FullDuplex
	}
	if o.EnvoyConcurrency == 0 {
		o.EnvoyConcurrency = 1
	}
	return o, nil
}

// start uses ports as: Envoy listener, Envoy admin, router gRPC, router
// admin, then one per simulator.
func (s *Stack) start(ctx context.Context, ports []int) error {
	o := s.opts
	pool := scorer.PoolConfig{Name: o.Model, MaxModelLen: o.MaxModelLen}
	for i, so := range o.Sims {
		sim, err := StartSim(ctx, o.Binary, o.Dir, ports[4+i], so)
		if err != nil {
			return err
		}
		s.Sims = append(s.Sims, sim)
		pool.Endpoints = append(pool.Endpoints, sim.Addr)
	}
	cfg := router.Config{
		Server: router.Server{GRPCAddr: Addr(ports[2]), AdminAddr: Addr(ports[3]), TLS: o.RouterTLS},
		Proxy:  router.Proxy{MaxBodyBytes: o.MaxBodyBytes, DecisionHeader: o.DecisionHeader},
		Routing: router.Routing{Pools: append([]scorer.PoolConfig{pool}, o.ExtraPools...), DefaultPool: o.DefaultPool,
			Fallbacks: o.Fallbacks},
	}
	r, err := StartRouter(ctx, o.Binary, o.Dir, cfg, o.RouterArgs...)
	if err != nil {
		return err
	}
	s.Router = r
	params := envoy.Params{ListenPort: ports[0], AdminPort: ports[1], RouterPort: ports[2],
		AccessLog: o.AccessLog, SubsetHintHeader: o.SubsetHintHeader, RouterTLS: o.EnvoyTLS}
	if o.Fallbacks > 0 {
		params.Retries = o.Fallbacks
		for i := range o.Sims {
			params.ModelServers = append(params.ModelServers, envoy.HostPort{Host: "127.0.0.1", Port: ports[4+i]})
		}
	}
	e, err := StartEnvoy(ctx, o.Envoy, o.Dir, "envoy", o.Template, params, o.EnvoyConcurrency)
	if err != nil {
		return err
	}
	s.Envoy = e
	return nil
}

// URL returns the address of path on Envoy's listener.
func (s *Stack) URL(path string) string { return s.Envoy.URL(path) }

// Processes lists the running parts in start order.
func (s *Stack) Processes() []*Process {
	var ps []*Process
	for _, sim := range s.Sims {
		ps = append(ps, sim.Process)
	}
	if s.Router != nil {
		ps = append(ps, s.Router.Process)
	}
	if s.Envoy != nil {
		ps = append(ps, s.Envoy.Process)
	}
	return ps
}

// Logs returns the last n lines of every process's log, for a failing test.
func (s *Stack) Logs(n int) string {
	var b strings.Builder
	for _, p := range s.Processes() {
		fmt.Fprintf(&b, "\n--- %s (%s, last %d lines) ---\n%s\n", p.Name(), p.LogPath(), n, p.Tail(n))
	}
	return b.String()
}

// Close stops Envoy first, so no new request arrives, then the router and
// the simulators together (each may take its shutdown grace), and reports the
// processes that had died on their own or would not stop.
func (s *Stack) Close() error {
	ps := s.Processes()
	if len(ps) == 0 {
		return nil
	}
	var errs []error
	if s.Envoy != nil {
		errs = append(errs, s.Envoy.Stop())
		ps = ps[:len(ps)-1]
	}
	results := make(chan error, len(ps))
	for _, p := range ps {
		go func() { results <- p.Stop() }()
	}
	for range ps {
		errs = append(errs, <-results)
	}
	return errors.Join(errs...)
}
