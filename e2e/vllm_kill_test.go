package e2e

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/internal/testwait"
)

// vllmSuccess is vLLM's counter of finished requests.
const vllmSuccess = "vllm:request_success_total"

// killedEngine kills the engine holding the warm prompt (SIGKILL to its
// whole process group: API server, EngineCore and workers) and checks the
// router sees it down through its relay's heartbeat (the relay probes the
// engine's /health), sends it nothing afterwards (every request succeeds on
// the other engine, whose own request counter counts them all), and that
// its blocks leave the index once its relay is gone too (the pod is gone):
// every chain it held looked up, none left on it, the survivor's index
// still exactly its blocks.
func (p *vllmPair) killedEngine(t *testing.T) {
	if p.warm == nil || p.warmOn < 0 {
		t.Fatal("no warm prompt left by warm_before_finish")
	}
	ctx := context.Background()
	vi, si := p.warmOn, 1-p.warmOn
	victim, survivor := p.engines[vi], p.engines[si]
	held := p.held(t, p.logs)
	before := engineSuccess(t, survivor)
	at := time.Now()
	if err := syscall.Kill(-victim.Sim.Pid(), syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %s's process group: %v", victim.Sim.ID, err)
	}
	victim.Sim.Kill() // reaps it
	detected := p.waitDown(t, victim.Sim.Addr, "disconnected", at)
	t.Logf("%s killed; the router marked it down (disconnected) after %s", victim.Sim.ID, detected.Sub(at).Round(time.Millisecond))
	kept := heldOn(t, p.f.Router, victim, held[vi])
	t.Logf("while its relay runs, the index keeps %d of the dead engine's %d blocks (chains looked up), not routed to", kept, len(held[vi]))
	sent := p.sendAfterKill(t, survivor, 3)
	testwait.Until(t, 30*time.Second, func() string {
		if got := engineSuccess(t, survivor) - before; got != float64(sent) {
			return fmt.Sprintf("%s counts %v requests finished since the kill, %d were sent", survivor.Sim.ID, got, sent)
		}
		return ""
	})
	relayAt := time.Now()
	p.f.Relays[vi].Kill()
	testwait.Until(t, time.Minute, func() string {
		if n := heldOn(t, p.f.Router, victim, held[vi]); n != 0 {
			return fmt.Sprintf("the index still holds %d of %s's blocks", n, victim.Sim.ID)
		}
		n, err := p.f.Router.IndexEntries(ctx, victim.Sim.Addr)
		if err != nil || n.Confirmed != 0 || n.Speculative != 0 {
			return fmt.Sprintf("%s's entries: %+v %v", victim.Sim.ID, n, err)
		}
		return ""
	})
	t.Logf("its relay killed too: the index held none of its blocks %s later", time.Since(relayAt).Round(time.Millisecond))
	p.indexEqualsEngines(t, []*vllmEngine{survivor}, p.logs[si:si+1])
	r := sendVLLM(t, p.f.Envoy.URL("/v1/completions"), p.warm)
	if got := decisionEndpoint(r.d); got != survivor.Sim.Addr || r.d.basis != "confirmed" {
		t.Errorf("the warm prompt after the kill: %s, want confirmed on %s (it served it since)", r.decision, survivor.Sim.Addr)
	}
	p.checkCached(t, "after the kill", r)
	t.Logf("%d requests after the kill, all on %s; the warm prompt now cached %d there (%s)", sent+1, survivor.Sim.ID, r.cached, r.decision)
}

// sendAfterKill sends the warm prompt and fresh prompts n times each
// through Envoy; each must succeed on survivor. It returns how many it sent.
func (p *vllmPair) sendAfterKill(t *testing.T, survivor *vllmEngine, n int) int {
	t.Helper()
	sent := 0
	for i := range n {
		fresh := mustJSON(t, map[string]any{"model": model, "max_tokens": 1,
			"prompt": words(fmt.Sprintf("%safter%d", p.run, i), 60)})
		for _, body := range [][]byte{p.warm, fresh} {
			r := sendVLLM(t, p.f.Envoy.URL("/v1/completions"), body)
			sent++
			if got := decisionEndpoint(r.d); got != survivor.Sim.Addr {
				t.Errorf("request %d after the kill routed to %q (%s), want %s", sent, got, r.decision, survivor.Sim.Addr)
			}
		}
	}
	return sent
}

// waitDown waits for the router's "endpoint down" log line for endpoint
// with reason, after at, and returns its time.
func (p *vllmPair) waitDown(t *testing.T, endpoint, reason string, at time.Time) time.Time {
	t.Helper()
	var when time.Time
	testwait.Until(t, time.Minute, func() string {
		w, ok, err := harness.FirstLogAfter(p.f.Router.LogPath(), "endpoint down", map[string]string{"endpoint": endpoint, "reason": reason}, at)
		if err != nil {
			return err.Error()
		}
		if !ok {
			return "the router has not marked " + endpoint + " down (" + reason + ")"
		}
		when = w
		return ""
	})
	return when
}

// heldOn looks up each of the chains and returns how many of their blocks
// the index holds confirmed on e (each chain counted at its last block:
// the chain's own block, the others are chains of their own).
func heldOn(t *testing.T, r *harness.Router, e *vllmEngine, chains vllmChains) int {
	t.Helper()
	n := 0
	for _, tokens := range chains {
		res, err := r.IndexLookup(context.Background(), api.IndexLookupRequest{Model: model, Tokens: tokens})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := lookupConfirmed(res, e.Sim.Addr); got == len(tokens)/vllmBlockSize {
			n++
		}
	}
	return n
}

func engineSuccess(t *testing.T, e *vllmEngine) float64 {
	t.Helper()
	m, err := harness.Scrape(context.Background(), "http://"+e.Sim.Addr+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	return m.Sum(vllmSuccess, nil)
}
