package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/internal/testwait"
	"github.com/warmroute/warmroute/router"
)

// newReplicaStack starts two router replicas sharing predictions over one
// NATS process behind one Envoy, stops it when t ends, and prints the logs
// if t failed.
func newReplicaStack(t *testing.T, o harness.ReplicaOptions) *harness.ReplicaStack {
	t.Helper()
	o.Envoy = harness.EnvoyForTest(t)
	o.Tokenizer = harness.Qwen3ForTest(t)
	bin, err := buildBin()
	if err != nil {
		t.Fatal(err)
	}
	if o.NATSD, err = buildNATSD(); err != nil {
		t.Fatal(err)
	}
	o.Binary, o.Dir = bin, t.TempDir()
	o.SimArgs = append(slices.Clone(prefixSimArgs), o.SimArgs...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rs, err := harness.StartReplicaStack(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	stopAtCleanup(t, "replica stack", rs)
	return rs
}

// replicaDecisions returns each router's warmroute_scorer_decisions_total.
func replicaDecisions(t *testing.T, rs *harness.ReplicaStack) []float64 {
	t.Helper()
	out := make([]float64, len(rs.Routers))
	for i, r := range rs.Routers {
		out[i] = routerMetrics(t, r).Sum(decisionsMetric, nil)
	}
	return out
}

// sendReplicas sends prompt through rs's Envoy and returns what became of it
// and which replica decided it (the one whose decision count grew).
func sendReplicas(t *testing.T, rs *harness.ReplicaStack, prompt string) (routed, int) {
	t.Helper()
	before := replicaDecisions(t, rs)
	got, status := send(t, rs.URL("/v1/completions"), prompt, nil)
	if status != 200 {
		t.Fatalf("completion answered %d", status)
	}
	after := replicaDecisions(t, rs)
	decider := -1
	for i := range after {
		switch d := after[i] - before[i]; {
		case d == 1 && decider == -1:
			decider = i
		case d != 0:
			t.Fatalf("decision counts went %v -> %v for one request", before, after)
		}
	}
	if decider < 0 {
		t.Fatalf("no replica counted the decision (%v -> %v)", before, after)
	}
	return got, decider
}

func simAddr(t *testing.T, rs *harness.ReplicaStack, id string) string {
	t.Helper()
	for _, s := range rs.EventSims {
		if s.ID == id {
			return s.Addr
		}
	}
	t.Fatalf("x-warmroute-served-by = %q names no simulator", id)
	return ""
}

// TestReplicasSharePredictions runs two router replicas behind one Envoy
// (round robin over ext_proc streams) sharing predictions over one NATS with
// JetStream. Events reach the routers a second late, so a prediction is
// still speculative while the tests look.
func TestReplicasSharePredictions(t *testing.T) {
	rs := newReplicaStack(t, harness.ReplicaOptions{JetStream: true,
		SimArgs: []string{"--event-delay", "1s"},
		Configure: func(c *router.Config) {
			// Long enough to outlive a replica restart.
			c.TTL.Static, c.TTL.MaxStale = api.Duration(6*time.Second), api.Duration(10*time.Second)
		}})
	t.Run("non-deciding replica counts no endings", func(t *testing.T) { testNoDoubleCount(t, rs) })
	t.Run("pair across replicas routes on the prediction", func(t *testing.T) { testPairAcrossReplicas(t, rs) })
	t.Run("restarted replica keeps live predictions", func(t *testing.T) { testReplicaRestart(t, rs) })
}

// testNoDoubleCount: one decision by one replica. The other applies the
// shared prediction and the confirmation in its index, but only the decider
// counts the prediction's endings.
func testNoDoubleCount(t *testing.T, rs *harness.ReplicaStack) {
	before := make([]map[string]float64, len(rs.Routers))
	for i, r := range rs.Routers {
		before[i] = map[string]float64{}
		for _, e := range []string{"confirmed", "early_expiry", "stale_expiry", "dropped"} {
			before[i][e] = endings(t, r, e)
		}
	}
	prompt := words("solo", 40)
	got, x := sendReplicas(t, rs, prompt)
	y := 1 - x
	ep := simAddr(t, rs, got.simID)
	tokens := tokenize(t, rs.EventSims[0], prompt)
	var predicted int
	testwait.Until(t, 5*time.Second, func() string {
		own, shared := lookupAt(t, rs.Routers[x], rs.Model, tokens, ep), lookupAt(t, rs.Routers[y], rs.Model, tokens, ep)
		if own.Speculative == 0 || shared.Speculative != own.Speculative {
			return fmt.Sprintf("decider r%d holds %+v, other replica %+v: want the same speculative blocks", x, own, shared)
		}
		predicted = own.Speculative
		return ""
	})
	testwait.Until(t, 10*time.Second, func() string {
		if d := endings(t, rs.Routers[x], "confirmed") - before[x]["confirmed"]; d != float64(predicted) {
			return fmt.Sprintf("decider r%d counted %v confirmed blocks, want %d", x, d, predicted)
		}
		if c := lookupAt(t, rs.Routers[y], rs.Model, tokens, ep).Confirmed; c < predicted {
			return fmt.Sprintf("other replica r%d holds %d confirmed blocks, want %d", y, c, predicted)
		}
		return ""
	})
	for e, v := range before[y] {
		if d := endings(t, rs.Routers[y], e) - v; d != 0 {
			t.Errorf("non-deciding replica r%d counted %v %s blocks of r%d's decision", y, d, e, x)
		}
	}
}

// testPairAcrossReplicas: the second request of a pair is decided by the
// other replica, which has only the shared prediction to go on.
func testPairAcrossReplicas(t *testing.T, rs *harness.ReplicaStack) {
	for attempt := range 3 {
		prompt := words(fmt.Sprintf("pair%d", attempt), 40)
		first, x := sendReplicas(t, rs, prompt)
		ep := simAddr(t, rs, first.simID)
		tokens := tokenize(t, rs.EventSims[0], prompt)
		testwait.Until(t, 2*time.Second, func() string {
			if l := lookupAt(t, rs.Routers[1-x], rs.Model, tokens, ep); l.Speculative == 0 {
				return fmt.Sprintf("r%d has not received r%d's prediction: %+v", 1-x, x, l)
			}
			return ""
		})
		second, y := sendReplicas(t, rs, prompt)
		if y == x {
			t.Logf("attempt %d: both requests went to r%d; trying again", attempt, x)
			continue
		}
		if second.decision.basis != "speculative" || second.simID != first.simID || second.cached == 0 {
			t.Fatalf("second request on r%d: %s served by %s (first by %s), cached %d; want basis=speculative on the same endpoint with a cache hit",
				y, second.decision.raw, second.simID, first.simID, second.cached)
		}
		return
	}
	t.Fatal("Envoy sent every pair's two requests to the same replica; want round robin")
}

// testReplicaRestart: a replica restarted while a prediction is live replays
// it from the predictions stream. Events are cut so nothing confirms it
// meanwhile (the relays keep heartbeating, so the endpoints stay fresh).
func testReplicaRestart(t *testing.T, rs *harness.ReplicaStack) {
	ctx := context.Background()
	for _, s := range rs.EventSims {
		if err := s.PauseEvents(ctx, true); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, s := range rs.EventSims {
			_ = s.PauseEvents(ctx, false)
		}
	})
	prompt := words("restart", 40)
	first, x := sendReplicas(t, rs, prompt)
	y := 1 - x
	ep := simAddr(t, rs, first.simID)
	tokens := tokenize(t, rs.EventSims[0], prompt)
	testwait.Until(t, 2*time.Second, func() string {
		if l := lookupAt(t, rs.Routers[y], rs.Model, tokens, ep); l.Speculative == 0 {
			return fmt.Sprintf("r%d has not received r%d's prediction: %+v", y, x, l)
		}
		return ""
	})
	start := time.Now()
	if err := rs.RestartRouter(ctx, y); err != nil {
		t.Fatal(err)
	}
	t.Logf("r%d restarted in %v", y, time.Since(start))
	if l := lookupAt(t, rs.Routers[y], rs.Model, tokens, ep); l.Speculative == 0 || l.Confirmed != 0 {
		t.Fatalf("restarted r%d holds %+v for the live prediction, want speculative blocks only", y, l)
	}
	// Round robin resumes where it was: the next request goes to y. Should
	// Envoy pick x instead, the request after goes to y.
	for range 2 {
		second, d := sendReplicas(t, rs, prompt)
		if d != y {
			continue
		}
		if second.decision.basis != "speculative" || second.simID != first.simID {
			t.Fatalf("restarted r%d decided %s served by %s; want basis=speculative on %s", y, second.decision.raw, second.simID, first.simID)
		}
		return
	}
	t.Fatalf("no request reached the restarted r%d", y)
}
