package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/internal/testwait"
	"github.com/warmroute/warmroute/router"
	"github.com/warmroute/warmroute/scorer"
)

// jsonLogs makes a process log JSON lines, whose times the cases read.
var jsonLogs = []string{"--log-format", "json"}

// faultPrefixStack is newPrefixStack with JSON logs from the router and the
// relays.
func faultPrefixStack(t *testing.T, o harness.PrefixOptions) *harness.PrefixStack {
	t.Helper()
	o.RouterArgs = append(o.RouterArgs, jsonLogs...)
	o.RelayArgs = append(o.RelayArgs, jsonLogs...)
	return newPrefixStack(t, o)
}

// warmUp sends n distinct prompts (tagged tag) until every simulator holds
// blocks of at least one, waits until the index equals the simulators'
// caches, and returns the prompts.
func warmUp(t *testing.T, ps *harness.PrefixStack, tag string, n int) []string {
	t.Helper()
	var prompts []string
	served := map[string]bool{}
	for i := 0; i < n || len(served) < len(ps.Sims); i++ {
		if i > 4*n+20 {
			t.Fatalf("%d prompts reached only %v", i, served)
		}
		p := words(fmt.Sprintf("%s%d", tag, i), 30)
		prompts = append(prompts, p)
		served[complete(t, ps, p, nil).simID] = true
	}
	waitConverged(t, ps, "after warming up")
	return prompts
}

// stackDivergence is divergence over every simulator of ps.
func stackDivergence(t *testing.T, ps *harness.PrefixStack) func() string {
	return func() string {
		for _, s := range ps.EventSims {
			if why := divergence(t, ps, s); why != "" {
				return why
			}
		}
		return ""
	}
}

// routerLogAfter waits for the router's log line msg about endpoint after
// since and returns its time.
func routerLogAfter(t *testing.T, r *harness.Router, msg, endpoint string, since time.Time) time.Time {
	t.Helper()
	var at time.Time
	testwait.Until(t, 30*time.Second, func() string {
		ts, ok, err := harness.FirstLogAfter(r.LogPath(), msg, map[string]string{"endpoint": endpoint}, since)
		if err != nil {
			return err.Error()
		}
		if !ok {
			return fmt.Sprintf("router logged no %q for %s yet", msg, endpoint)
		}
		at = ts
		return ""
	})
	return at
}

// heardAgain waits until the router heard every relay of ps after since
// and returns when it found so: the moment a bus fault has cleared for it.
func heardAgain(t *testing.T, ps *harness.PrefixStack, since time.Time) time.Time {
	t.Helper()
	if err := ps.WaitSources(context.Background(), since); err != nil {
		t.Fatal(err)
	}
	return time.Now()
}

// pyStack is a router (its embedded NATS, or an external server) with
// vLLM-exact python engines and their relays; no Envoy, no requests.
type pyStack struct {
	router  *harness.Router
	engines []*harness.PyEngine
	relays  []*harness.Relay
	proxy   *harness.NATSProxy // between the relays and NATS, when asked
	bin     string
	dir     string
}

type pyOptions struct {
	engines int
	// listen: each relay listens (--zmq-listen) and its engine connects,
	// with the relay probing the engine's /health.
	listen bool
	// proxy puts a NATSProxy between the relays and NATS.
	proxy bool
	// sameEndpoint gives every engine the first engine's endpoint, engine i
	// being data-parallel rank i; only rank 0's relay is told its rank.
	sameEndpoint bool
	misses       int // router heartbeat misses; default harness.RouterHeartbeatMisses
}

func newPyStack(t *testing.T, o pyOptions) *pyStack {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root, err := harness.ModuleRoot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	py, err := harness.PythonWithZMQ(ctx, root, testLog{t})
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skipf("python with pyzmq and msgspec unavailable: %v", err)
	}
	bin, err := buildBin()
	if err != nil {
		t.Fatal(err)
	}
	s := &pyStack{bin: bin, dir: t.TempDir()}
	t.Cleanup(func() { s.close(t) })
	for i := range o.engines {
		e, err := harness.StartPyEngine(ctx, s.dir, harness.PyEngineOptions{Name: fmt.Sprintf("engine-%d", i),
			Python: py, Script: harness.PyEngineScript(root), RelayListens: o.listen, DPRank: rankOf(o, i)})
		if err != nil {
			t.Fatal(err)
		}
		s.engines = append(s.engines, e)
	}
	ports, err := harness.FreePorts(2 + o.engines)
	if err != nil {
		t.Fatal(err)
	}
	pool := scorer.PoolConfig{Name: model}
	for i, e := range s.engines {
		if !o.sameEndpoint || i == 0 {
			pool.Endpoints = append(pool.Endpoints, e.Addr)
		}
	}
	cfg := router.Config{GRPCAddr: harness.Addr(ports[0]), AdminAddr: harness.Addr(ports[1]), Pools: []scorer.PoolConfig{pool}}
	cfg.Index.BlockSize = 4
	cfg.Events.HeartbeatMisses = harness.RouterHeartbeatMisses
	if o.misses != 0 {
		cfg.Events.HeartbeatMisses = o.misses
	}
	if s.router, err = harness.StartRouter(ctx, bin, s.dir, cfg, jsonLogs...); err != nil {
		t.Fatal(err)
	}
	natsURL := "nats://" + s.router.NATSAddr
	if o.proxy {
		if s.proxy, err = harness.StartNATSProxy(s.router.NATSAddr); err != nil {
			t.Fatal(err)
		}
		natsURL = s.proxy.URL()
	}
	for i, e := range s.engines {
		args := slices.Clone(jsonLogs)
		if o.listen {
			args = append(args, "--zmq-listen", "--engine-health-url", e.HealthURL())
		}
		if o.sameEndpoint && i == 0 {
			args = append(args, "--dp-rank", "0")
		}
		endpoint := e.Addr
		if o.sameEndpoint {
			endpoint = s.engines[0].Addr
		}
		r, err := harness.StartRelayForPy(ctx, bin, s.dir, ports[2+i], e, endpoint,
			harness.RelayOptions{Model: model, NATS: natsURL, Args: args})
		if err != nil {
			t.Fatal(err)
		}
		s.relays = append(s.relays, r)
	}
	return s
}

func rankOf(o pyOptions, i int) int {
	if o.sameEndpoint {
		return i
	}
	return 0
}

func (s *pyStack) close(t *testing.T) {
	if t.Failed() {
		for _, p := range s.processes() {
			t.Logf("--- %s (last 30 lines) ---\n%s", p.Name(), p.Tail(30))
		}
	}
	for _, r := range s.relays {
		_ = r.Stop()
	}
	if s.router != nil {
		_ = s.router.Stop()
	}
	if s.proxy != nil {
		_ = s.proxy.Close()
	}
	for _, e := range s.engines {
		_ = e.Close()
	}
}

func (s *pyStack) processes() []*harness.Process {
	var out []*harness.Process
	if s.router != nil {
		out = append(out, s.router.Process)
	}
	for _, r := range s.relays {
		out = append(out, r.Process)
	}
	return out
}

// do runs engine commands, failing t on an error.
func (s *pyStack) do(t *testing.T, e *harness.PyEngine, commands ...string) {
	t.Helper()
	for _, c := range commands {
		if _, err := e.Do(c); err != nil {
			t.Fatal(err)
		}
	}
}

// divergence compares the router's view of endpoint with the union of the
// engines' true block sets (engines of one endpoint: its DP ranks): the
// confirmed count and every true chain looked up in full.
func (s *pyStack) divergence(t *testing.T, endpoint string, engines ...*harness.PyEngine) func() string {
	return func() string {
		ctx := context.Background()
		want := 0
		var chains [][]uint32
		for _, e := range engines {
			truth, err := e.Truth()
			if err != nil {
				t.Fatal(err)
			}
			want += truth.Blocks
			for _, c := range truth.Chains {
				chains = append(chains, c)
			}
		}
		got, err := s.router.IndexEntries(ctx, endpoint)
		if err != nil {
			return err.Error()
		}
		if got.Confirmed != want {
			return fmt.Sprintf("router holds %d confirmed blocks for %s, the engines hold %d", got.Confirmed, endpoint, want)
		}
		for _, c := range chains {
			res, err := s.router.IndexLookup(ctx, api.IndexLookupRequest{Model: model, Tokens: c})
			if err != nil {
				return err.Error()
			}
			n := 0
			for _, l := range res.Endpoints {
				if l.Endpoint == endpoint {
					n = l.Confirmed
				}
			}
			if n != len(c)/4 {
				return fmt.Sprintf("router holds %d of a %d-block true chain on %s", n, len(c)/4, endpoint)
			}
		}
		return ""
	}
}

func (s *pyStack) metrics() string { return s.router.MetricsURL() }

// testLog writes to t.Log.
type testLog struct{ t *testing.T }

func (l testLog) Write(b []byte) (int, error) {
	l.t.Log(string(b))
	return len(b), nil
}

// join stores one-block chains on e until the router holds blocks for
// endpoint: a PUB socket drops what it sends before its subscriber joined
// (and nothing tells the relay of a lost last batch), so a case starts once
// the link demonstrably carries batches. Later batches let the relay replay
// any earlier ones it missed.
func (s *pyStack) join(t *testing.T, e *harness.PyEngine, endpoint string) {
	t.Helper()
	testwait.Until(t, 30*time.Second, func() string {
		s.do(t, e, "store join 1")
		if n, err := s.router.IndexEntries(context.Background(), endpoint); err != nil || n.Confirmed == 0 {
			return fmt.Sprintf("no block of %s reached the router yet (%+v, %v)", endpoint, n, err)
		}
		return ""
	})
}
