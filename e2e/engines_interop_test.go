package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/internal/testwait"
	"github.com/warmroute/warmroute/router"
	"github.com/warmroute/warmroute/scorer"
)

// enginePublisher is events/wire/testdata/engines/publish.py: vLLM's or
// SGLang's own ZmqEventPublisher and event classes, loaded from the
// engine's wheel, publishing on demand.
type enginePublisher struct {
	t                             *testing.T
	kind                          string // "vllm" or "sglang"
	in                            io.WriteCloser
	out                           *bufio.Scanner
	pubPort, replayPort, httpPort int
	addr                          string // its HTTP address: the endpoint
	sim                           *harness.EventSim
}

func startEnginePublisher(t *testing.T, py, root, kind, wheel, logDir string) *enginePublisher {
	t.Helper()
	ports, err := harness.FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, "events", "wire", "testdata", "engines", "publish.py")
	cmd := exec.Command(py, script, kind, wheel, fmt.Sprint(ports[0]), fmt.Sprint(ports[1]), fmt.Sprint(ports[2]))
	logf, err := os.Create(filepath.Join(logDir, kind+"-publisher.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logf
	in, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close(); _ = cmd.Wait(); logf.Close() })
	p := &enginePublisher{t: t, kind: kind, in: in, out: bufio.NewScanner(stdout),
		pubPort: ports[0], replayPort: ports[1], httpPort: ports[2], addr: harness.Addr(ports[2])}
	if !p.out.Scan() || p.out.Text() != "ready" {
		b, _ := os.ReadFile(logf.Name())
		t.Fatalf("%s publisher said %q\n%s", kind, p.out.Text(), b)
	}
	// The relay reads only an EventSim's addresses and block size.
	p.sim = &harness.EventSim{Sim: &harness.Sim{ID: kind, Addr: p.addr, Port: ports[2]},
		EventsPort: ports[0], ReplayPort: ports[1], BlockSize: 8}
	return p
}

// do sends one command and waits until the publisher's thread sent it.
func (p *enginePublisher) do(command string) {
	p.t.Helper()
	fmt.Fprintln(p.in, command)
	if !p.out.Scan() || p.out.Text() != "ok" {
		p.t.Fatalf("%s publisher %q: %q", p.kind, command, p.out.Text())
	}
}

// chainCheck is one lookup through the router's debug API: the tokens
// base, base+1, ... of blocks blocks under an identity, and what the
// publishing engine's endpoint must hold of them (every other endpoint:
// nothing).
type chainCheck struct {
	name       string
	engine     string // "vllm" or "sglang"
	lora, salt string
	base       uint32
	blocks     int
	confirmed  int
	weighted   float64 // checked when not 0
}

// shapePublishes are the wire shapes published, as publish.py commands,
// each with its own tokens (engines.py's shapes, based apart).
var shapePublishes = []struct{ engine, command string }{
	{"vllm", "publish vllm_salted 1000"},
	{"vllm", "publish vllm_lora_salted 2000"},
	{"vllm", "publish vllm_multimodal 3000"},
	{"vllm", "publish vllm_hybrid 4000"},
	{"vllm", "publish vllm_lookahead 5000"},
	{"sglang", "publish sglang_salted 6000"},
	{"sglang", "publish sglang_eagle_bigram 7000"},
	{"sglang", "publish sglang_media 8000"},
	{"sglang", "tiers 9000"},
}

var shapeChecks = []chainCheck{
	// vLLM's cache_salt, extra_keys[0] of the request's first block.
	{name: "vllm salted, same salt", engine: "vllm", salt: "tenant-a", base: 1000, blocks: 2, confirmed: 2, weighted: 2},
	{name: "vllm salted, no salt", engine: "vllm", base: 1000, blocks: 2},
	{name: "vllm salted, other salt", engine: "vllm", salt: "tenant-x", base: 1000, blocks: 2},
	// LoRA name then salt in extra_keys[0].
	{name: "vllm lora+salt", engine: "vllm", lora: "ad1", salt: "tenant-b", base: 2000, blocks: 1, confirmed: 1},
	{name: "vllm lora, no salt", engine: "vllm", lora: "ad1", base: 2000, blocks: 1},
	{name: "vllm salt, no lora", engine: "vllm", salt: "tenant-b", base: 2000, blocks: 1},
	// Blocks 1 and 2 carry (mm_hash, offset): only block 0 is text.
	{name: "vllm multimodal", engine: "vllm", base: 3000, blocks: 4, confirmed: 1},
	// Full-attention group of 4 blocks; the sliding-window group's 2 and
	// its removal of one are not the index's.
	{name: "vllm hybrid", engine: "vllm", base: 4000, blocks: 4, confirmed: 4},
	{name: "vllm lookahead", engine: "vllm", base: 5000, blocks: 2, confirmed: 2},
	// SGLang's top-level cache_salt.
	{name: "sglang salted, same salt", engine: "sglang", salt: "tenant-c", base: 6000, blocks: 2, confirmed: 2},
	{name: "sglang salted, no salt", engine: "sglang", base: 6000, blocks: 2},
	{name: "sglang eagle bigram", engine: "sglang", base: 7000, blocks: 1, confirmed: 1},
	// Stored on every tier, removed from CPU_PINNED: still on GPU.
	{name: "sglang media", engine: "sglang", base: 8000, blocks: 1, confirmed: 1, weighted: 1},
	{name: "sglang CPU_PINNED only", engine: "sglang", base: 9000, blocks: 1, confirmed: 1, weighted: 0.8},
	{name: "sglang DISK only", engine: "sglang", base: 9008, blocks: 1, confirmed: 1, weighted: 0.5},
	{name: "sglang EXTERNAL only", engine: "sglang", base: 9016, blocks: 1, confirmed: 1, weighted: 0.5},
}

// TestEnginePublishersThroughRelay publishes every engine wire shape with
// vLLM 0.33.0's and SGLang 0.5.23's own kv_events.py (event classes and
// ZmqEventPublisher, from their wheels) over ZMQ to real `warmroute relay`
// processes, through NATS to the router, and looks each chain up in the
// router's index; then restarts the router, which rebuilds the index from
// the relays' snapshots, and looks them up again. It also checks that each
// relay reports its engine's load gauges under the engine's own names.
func TestEnginePublishersThroughRelay(t *testing.T) {
	if testing.Short() {
		t.Skip("starts python, relays and a router")
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	root, err := harness.ModuleRoot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	unavailable := func(err error) {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skipf("engine wheels or python unavailable: %v", err)
	}
	py, err := harness.PythonWithZMQ(ctx, root, testLog{t})
	if err != nil {
		unavailable(err)
	}
	vllmWheel, sglangWheel, err := harness.EngineWheels(ctx, root, py, testLog{t})
	if err != nil {
		unavailable(err)
	}
	bin, err := buildBin()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("python, wheels and the warmroute binary ready after %s", time.Since(start).Round(time.Millisecond))
	dir := t.TempDir()
	began := time.Now()
	pubs := map[string]*enginePublisher{
		"vllm":   startEnginePublisher(t, py, root, "vllm", vllmWheel, dir),
		"sglang": startEnginePublisher(t, py, root, "sglang", sglangWheel, dir),
	}
	ports, err := harness.FreePorts(4)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("publishers ready after %s", time.Since(began).Round(time.Millisecond))
	cfg := router.Config{GRPCAddr: harness.Addr(ports[0]), AdminAddr: harness.Addr(ports[1]),
		Pools: []scorer.PoolConfig{{Name: model, Endpoints: []string{pubs["vllm"].addr, pubs["sglang"].addr}}}}
	cfg.Index.BlockSize = 8
	cfg.Events.HeartbeatMisses = harness.RouterHeartbeatMisses
	rt, err := harness.StartRouter(ctx, bin, dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	procs := []*harness.Process{rt.Process}
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range procs {
				t.Logf("--- %s ---\n%s", p.Name(), p.Tail(30))
			}
		}
	})
	t.Cleanup(func() { _ = rt.Stop() })
	for i, kind := range []string{"vllm", "sglang"} {
		r, err := harness.StartRelay(ctx, bin, dir, ports[2+i], pubs[kind].sim,
			harness.RelayOptions{Model: model, NATS: "nats://" + rt.NATSAddr})
		if err != nil {
			t.Fatal(err)
		}
		procs = append(procs, r.Process)
		t.Cleanup(func() { _ = r.Stop() })
	}

	t.Logf("router and relays ready after %s", time.Since(began).Round(time.Millisecond))
	// ZMQ's slow joiner: a batch published before the relay's subscription
	// reached the publisher is lost, and only a later batch's sequence
	// number shows the gap (the relay then replays it). So the first shape
	// is published until it arrives; every later loss is a gap.
	first := shapeChecks[0]
	testwait.Until(t, 20*time.Second, func() string {
		pubs["vllm"].do(shapePublishes[0].command)
		time.Sleep(100 * time.Millisecond)
		return checkChain(rt, pubs, first)
	})
	for _, p := range shapePublishes[1:] {
		pubs[p.engine].do(p.command)
	}
	waitChains(t, rt, pubs, "live events")
	t.Logf("every chain in the index after %s", time.Since(began).Round(time.Millisecond))

	t.Run("relays report the engines' load gauges", func(t *testing.T) {
		want := map[string]api.EngineLoad{"vllm": {Running: 3, Waiting: 2, KVCacheUsage: 0.25},
			"sglang": {Running: 5, Waiting: 4, KVCacheUsage: 0.5}}
		for kind, w := range want {
			got := engineLoad(t, rt, pubs[kind].addr)
			if got.Running != w.Running || got.Waiting != w.Waiting || got.KVCacheUsage != w.KVCacheUsage {
				t.Errorf("%s relay heartbeats load %+v, want %+v", kind, got, w)
			}
		}
	})

	t.Run("after a router restart, from the relays' snapshots", func(t *testing.T) {
		if err := rt.Stop(); err != nil {
			t.Logf("stopping the router: %v", err)
		}
		if err := rt.Restart(ctx); err != nil {
			t.Fatal(err)
		}
		procs[0] = rt.Process
		waitChains(t, rt, pubs, "snapshot syncs")
	})
}

// waitChains waits until every shapeCheck holds, then checks them once more.
func waitChains(t *testing.T, rt *harness.Router, pubs map[string]*enginePublisher, phase string) {
	t.Helper()
	testwait.Until(t, 20*time.Second, func() string {
		var bad []string
		for _, c := range shapeChecks {
			if msg := checkChain(rt, pubs, c); msg != "" {
				bad = append(bad, msg)
			}
		}
		if len(bad) > 0 {
			return phase + ":\n  " + strings.Join(bad, "\n  ")
		}
		return ""
	})
}

// checkChain looks c's tokens up; "" when every endpoint holds what it must.
func checkChain(rt *harness.Router, pubs map[string]*enginePublisher, c chainCheck) string {
	toks := make([]uint32, 8*c.blocks)
	for i := range toks {
		toks[i] = c.base + uint32(i)
	}
	res, err := rt.IndexLookup(context.Background(), api.IndexLookupRequest{Model: model, LoRA: c.lora, CacheSalt: c.salt, Tokens: toks})
	if err != nil {
		return c.name + ": " + err.Error()
	}
	for _, ep := range res.Endpoints {
		want, wantW := 0, 0.0
		if ep.Endpoint == pubs[c.engine].addr {
			want, wantW = c.confirmed, c.weighted
		}
		if ep.Confirmed != want || ep.Speculative != 0 || (wantW != 0 && math.Abs(ep.Weighted-wantW) > 1e-9) {
			return fmt.Sprintf("%s: %s holds %d confirmed (weighted %g) and %d speculative of %d blocks, want %d confirmed (weighted %g)",
				c.name, ep.Endpoint, ep.Confirmed, ep.Weighted, ep.Speculative, res.Blocks, want, wantW)
		}
	}
	return ""
}

// engineLoad returns the load in the next heartbeat of endpoint's relay
// that carries one.
func engineLoad(t *testing.T, rt *harness.Router, endpoint string) api.EngineLoad {
	t.Helper()
	nc, err := nats.Connect("nats://" + rt.NATSAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	subj, err := api.HeartbeatSubject(model, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := nc.SubscribeSync(subj)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		m, err := sub.NextMsg(time.Until(deadline))
		if err != nil {
			break
		}
		var h api.Heartbeat
		if err := json.Unmarshal(m.Data, &h); err != nil {
			t.Fatal(err)
		}
		if h.Load != nil {
			return *h.Load
		}
	}
	t.Fatalf("no heartbeat with a load from %s's relay within 10s", endpoint)
	return api.EngineLoad{}
}
