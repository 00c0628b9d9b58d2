package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/internal/testwait"
	"github.com/warmroute/warmroute/router"
)

const subsetHint = "x-e2e-subset-hint"

// Timings of the endings stack: events arrive eventDelay after the prefill,
// well within the TTL; an expired prediction waits indexGrace for a late
// confirmation before it counts as stale.
const (
	eventDelay = 300 * time.Millisecond
	staticTTL  = time.Second
	indexGrace = 2 * time.Second
)

// TestTTLEndings follows predictions through real Envoy, router, simulators
// and relays to each way they end: confirmed in time, lost to a failed
// prefill or a cancelled request (stale expiry), cleared by an engine
// restart, and confirmed after the TTL (early expiry).
func TestTTLEndings(t *testing.T) {
	ps := newPrefixStack(t, harness.PrefixOptions{Sims: 2,
		SimArgs: []string{"--event-delay", eventDelay.String()},
		Configure: func(c *router.Config) {
			c.TTL.Static = api.Duration(staticTTL)
			c.Index.Grace = api.Duration(indexGrace)
		}})
	// The validate tool compares its bases with the router's decision
	// counter, so it runs while nothing else sends.
	t.Run("validate tool", func(t *testing.T) { testValidateSpeculative(t, ps) })
	t.Run("success confirms before expiry", func(t *testing.T) { testConfirmedInTime(t, ps) })
	t.Run("failed prefill and cancellation expire stale", func(t *testing.T) { testLostPredictions(t, ps) })
	t.Run("late events count as early expiry", func(t *testing.T) { testLateConfirmation(t, ps) })
	t.Run("engine restart clears the endpoint", func(t *testing.T) { testEngineRestart(t, ps) })
}

// testValidateSpeculative runs `warmroute ttl validate` with gaps shorter
// than the event delay: every second request must rest on the first's
// prediction, and the tool's bases must be the router's counted decisions.
// No 0s gap: the tool then sends the second request before the first is
// answered, and either may be decided first.
func testValidateSpeculative(t *testing.T, ps *harness.PrefixStack) {
	before := scrape(t, ps.Stack)
	res := runValidate(t, ps.Stack, "--gaps", "30ms,80ms,150ms")
	checkDecisionsMatchMetrics(t, ps.Stack, before, res)
	if want := 2 * 3; len(res.Pairs) != want || res.Decisions["speculative"] != want {
		t.Errorf("%d pairs, decisions %v: want %d pairs whose second requests all rest on speculation", len(res.Pairs), res.Decisions, want)
	}
	for _, p := range res.Pairs {
		if slices.Contains(badVerdicts, p.Verdict) || p.SecondRaw.Decision.Basis != "speculative" || !p.SameEndpoint {
			t.Errorf("pair %d: verdict %q, second request rested on %s (same endpoint %v); want speculative on the first's endpoint",
				p.Index, p.Verdict, p.SecondRaw.Decision.Basis, p.SameEndpoint)
		}
	}
}

// testConfirmedInTime: a quick second request rides the prediction, a later
// one the confirmation, and the decider counts the blocks confirmed.
func testConfirmedInTime(t *testing.T, ps *harness.PrefixStack) {
	before := map[string]float64{}
	for _, e := range []string{"confirmed", "early_expiry", "stale_expiry"} {
		before[e] = endings(t, ps.Router, e)
	}
	prompt := words("ok", 40)
	url := ps.URL("/v1/completions")
	first, _ := send(t, url, prompt, nil)
	second, _ := send(t, url, prompt, nil)
	if second.decision.basis != "speculative" || second.simID != first.simID || second.cached == 0 {
		t.Fatalf("quick second request: %s on %s (first on %s), cached %d; want speculative on the same endpoint with a hit",
			second.decision.raw, second.simID, first.simID, second.cached)
	}
	ep := simByID(t, ps, first.simID)
	tokens := tokenize(t, ep, prompt)
	testwait.Until(t, 5*time.Second, func() string {
		if l := lookupAt(t, ps.Router, ps.Model, tokens, ep.Addr); l.Confirmed == 0 {
			return fmt.Sprintf("router holds %+v, want confirmed blocks", l)
		}
		return ""
	})
	if third, _ := send(t, url, prompt, nil); third.decision.basis != "confirmed" || third.simID != first.simID {
		t.Errorf("third request: %s on %s, want confirmed on %s", third.decision.raw, third.simID, first.simID)
	}
	blocks := float64(second.decision.spec)
	testwait.Until(t, 5*time.Second, func() string {
		if d := endings(t, ps.Router, "confirmed") - before["confirmed"]; d < blocks {
			return fmt.Sprintf("confirmed endings grew by %v, want >= %v", d, blocks)
		}
		return ""
	})
	for _, e := range []string{"early_expiry", "stale_expiry"} {
		if d := endings(t, ps.Router, e) - before[e]; d != 0 {
			t.Errorf("%s{ending=%s} grew by %v for predictions confirmed in time", endingsMetric, e, d)
		}
	}
}

// withdrawn reads warmroute_index_withdrawn_blocks_total.
func withdrawn(t *testing.T, r *harness.Router) float64 {
	t.Helper()
	v, _ := routerMetrics(t, r).Value("warmroute_index_withdrawn_blocks_total", nil)
	return v
}

// testLostPredictions: a prefill the engine fails and a request the client
// abandons before its prefill leave predictions no event will confirm. The
// router withdraws them as soon as it sees the failure (an error status, or
// a stream that ended before any response), counting them stale at once
// rather than at TTL: a quick second request no longer rides them, and
// nothing ever looks confirmed.
func testLostPredictions(t *testing.T, ps *harness.PrefixStack) {
	before := endings(t, ps.Router, "stale_expiry")
	beforeConfirmed := endings(t, ps.Router, "confirmed")
	beforeWithdrawn := withdrawn(t, ps.Router)
	url := ps.URL("/v1/completions")
	fail := map[string]string{"x-sim-fail-prefill": "true"}
	// Failed prefill, twice in quick succession.
	prompt := words("fail", 40)
	first, status := send(t, url, prompt, fail)
	second, status2 := send(t, url, prompt, fail)
	if status != 500 || status2 != 500 || second.decision.basis == "speculative" {
		t.Fatalf("failing pair answered %d, %d; second rested on %s, want 500s and no speculative match", status, status2, second.decision.raw)
	}
	failed := simByID(t, ps, first.simID)
	if w := withdrawn(t, ps.Router) - beforeWithdrawn; w == 0 {
		t.Fatal("the failed request's predictions were not withdrawn")
	}
	// Cancellation: the simulator waits before its prefill; the client
	// hangs up first, which ends the wait and the ext_proc stream.
	cancelled := words("cancel", 40)
	ep := cancelRequest(t, ps, cancelled)
	tokens := tokenize(t, ep, cancelled)
	testwait.Until(t, 5*time.Second, func() string {
		if l := lookupAt(t, ps.Router, ps.Model, tokens, ep.Addr); l.Speculative+l.Confirmed != 0 {
			return fmt.Sprintf("router holds %+v for the cancelled request, want nothing", l)
		}
		return ""
	})
	for _, lp := range []struct {
		ep     *harness.EventSim
		tokens []uint32
	}{{failed, tokenize(t, failed, prompt)}, {ep, tokens}} {
		if l := lookupAt(t, ps.Router, ps.Model, lp.tokens, lp.ep.Addr); l.Speculative+l.Confirmed != 0 {
			t.Errorf("router still holds %+v for a lost prediction on %s", l, lp.ep.Addr)
		}
	}
	w := withdrawn(t, ps.Router) - beforeWithdrawn
	testwait.Until(t, 5*time.Second, func() string {
		if d := endings(t, ps.Router, "stale_expiry") - before; d != w {
			return fmt.Sprintf("stale_expiry grew by %v, want the %v withdrawn blocks", d, w)
		}
		return ""
	})
	if d := endings(t, ps.Router, "confirmed") - beforeConfirmed; d != 0 {
		t.Errorf("confirmed endings grew by %v while only lost predictions were live", d)
	}
}

// cancelRequest sends prompt with a long simulator delay and hangs up once
// the router has committed its prediction; it returns the endpoint chosen.
func cancelRequest(t *testing.T, ps *harness.PrefixStack, prompt string) *harness.EventSim {
	t.Helper()
	ep := ps.EventSims[0]
	tokens := tokenize(t, ep, prompt)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := do(ctx, http.MethodPost, ps.URL("/v1/completions"), mustJSON(t, completionRequest(prompt, false)),
			map[string]string{"x-sim-delay": "10s", subsetHint: ep.Addr})
		done <- err
	}()
	testwait.Until(t, 5*time.Second, func() string {
		if l := lookupAt(t, ps.Router, ps.Model, tokens, ep.Addr); l.Speculative == 0 {
			return fmt.Sprintf("router holds %+v for the pending request, want its prediction", l)
		}
		return ""
	})
	cancel()
	if err := <-done; err == nil {
		t.Fatal("cancelled request succeeded")
	}
	return ep
}

// testLateConfirmation: the endpoint's events are cut while a prediction is
// made, so its confirmation only arrives once the pipeline is restored and
// the relay replays the gap, after the TTL but within the grace: an early
// expiry, not a stale one.
func testLateConfirmation(t *testing.T, ps *harness.PrefixStack) {
	ctx := context.Background()
	ep := ps.EventSims[1]
	hint := map[string]string{subsetHint: ep.Addr}
	beforeEarly, beforeStale := endings(t, ps.Router, "early_expiry"), endings(t, ps.Router, "stale_expiry")
	if err := ep.PauseEvents(ctx, true); err != nil {
		t.Fatal(err)
	}
	prompt := words("late", 40)
	r, status := send(t, ps.URL("/v1/completions"), prompt, hint)
	if status != 200 || r.simID != ep.ID {
		t.Fatalf("request answered %d by %s, want 200 by %s", status, r.simID, ep.ID)
	}
	tokens := tokenize(t, ep, prompt)
	predicted := lookupAt(t, ps.Router, ps.Model, tokens, ep.Addr).Speculative
	if predicted == 0 {
		t.Fatal("no prediction after the request")
	}
	testwait.Until(t, staticTTL+2*time.Second, func() string {
		if l := lookupAt(t, ps.Router, ps.Model, tokens, ep.Addr); l.Speculative != 0 {
			return fmt.Sprintf("prediction still live: %+v", l)
		}
		return ""
	})
	if err := ep.PauseEvents(ctx, false); err != nil {
		t.Fatal(err)
	}
	// A new batch shows the relay the gap, which it replays.
	if _, status := send(t, ps.URL("/v1/completions"), words("late-next", 40), hint); status != 200 {
		t.Fatalf("request after restoring events answered %d", status)
	}
	testwait.Until(t, indexGrace, func() string {
		if d := endings(t, ps.Router, "early_expiry") - beforeEarly; d != float64(predicted) {
			return fmt.Sprintf("early_expiry grew by %v, want %d", d, predicted)
		}
		return ""
	})
	if l := lookupAt(t, ps.Router, ps.Model, tokens, ep.Addr); l.Confirmed == 0 {
		t.Errorf("after the replay the router holds %+v, want the blocks confirmed", l)
	}
	if d := endings(t, ps.Router, "stale_expiry") - beforeStale; d != 0 {
		t.Errorf("stale_expiry grew by %v for a late confirmation", d)
	}
}

// testEngineRestart: an engine restart (POST /debug/restart) empties its
// cache without an event; the router learns it from the sequence starting
// again and clears the endpoint, so the old prefix is no longer routed on.
func testEngineRestart(t *testing.T, ps *harness.PrefixStack) {
	ctx := context.Background()
	ep := ps.EventSims[0]
	hint := map[string]string{subsetHint: ep.Addr}
	prompt := words("restart", 40)
	send(t, ps.URL("/v1/completions"), prompt, hint)
	tokens := tokenize(t, ep, prompt)
	testwait.Until(t, 5*time.Second, func() string {
		if l := lookupAt(t, ps.Router, ps.Model, tokens, ep.Addr); l.Confirmed == 0 {
			return fmt.Sprintf("router holds %+v, want confirmed blocks", l)
		}
		return ""
	})
	if err := ep.DebugRestart(ctx); err != nil {
		t.Fatal(err)
	}
	// The restarted engine's first batch (sequence 0) tells the router.
	send(t, ps.URL("/v1/completions"), words("after-restart", 40), hint)
	testwait.Until(t, 5*time.Second, func() string {
		if l := lookupAt(t, ps.Router, ps.Model, tokens, ep.Addr); l.Confirmed != 0 {
			return fmt.Sprintf("router still holds %+v for the restarted engine", l)
		}
		return ""
	})
	r, _ := send(t, ps.URL("/v1/completions"), prompt, hint)
	if r.decision.basis != "none" || r.cached != 0 {
		t.Errorf("old prefix after the restart: %s, cached %d; want basis=none and a cold cache", r.decision.raw, r.cached)
	}
}
