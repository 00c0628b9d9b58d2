package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/router"
)

// TestTTLPipelineCutStopsSpeculativeRoutes complements TestFreshnessGuard
// (which watches the paused gauge): while one endpoint's event pipeline is
// cut, quick pairs pinned to it get no speculative route, its report row
// says why, the other endpoint keeps speculating, and once the pipeline is
// back speculative routes to it resume.
func TestTTLPipelineCutStopsSpeculativeRoutes(t *testing.T) {
	ps := newPrefixStack(t, harness.PrefixOptions{Sims: 2,
		// Events arrive late enough that a quick second request can only
		// rest on the first's prediction.
		SimArgs: []string{"--event-delay", "400ms"},
		Configure: func(c *router.Config) {
			c.Events.HeartbeatMisses = 4 // a 1s silence limit at the relays' 250ms heartbeats
			c.TTL.Interval = api.Duration(250 * time.Millisecond)
		}})
	victim, other := ps.EventSims[0], ps.EventSims[1]
	if got := quickPair(t, ps, victim, "before"); got != "speculative" {
		t.Fatalf("before the cut a quick pair on %s rested on %s, want speculative", victim.ID, got)
	}
	ctx := context.Background()
	if err := victim.PauseEvents(ctx, true); err != nil {
		t.Fatal(err)
	}
	if err := ps.Relays[0].Stop(); err != nil {
		t.Fatal(err)
	}
	waitPaused(t, ps, victim.Addr, 1)
	checkPauseRows(t, ps, victim.Addr, other.Addr)
	routesBefore := routerMetrics(t, ps.Router).Sum(specRoutes, map[string]string{"endpoint": victim.Addr})
	for i := range 3 {
		if got := quickPair(t, ps, victim, fmt.Sprintf("cut%d", i)); got != "none" {
			t.Errorf("pair %d on the cut %s rested on %s, want none", i, victim.ID, got)
		}
	}
	if got := quickPair(t, ps, other, "other"); got != "speculative" {
		t.Errorf("pair on %s (pipeline intact) rested on %s, want speculative", other.ID, got)
	}
	if after := routerMetrics(t, ps.Router).Sum(specRoutes, map[string]string{"endpoint": victim.Addr}); after != routesBefore {
		t.Errorf("%s{endpoint=%s} went %v -> %v while paused", specRoutes, victim.Addr, routesBefore, after)
	}
	if err := victim.PauseEvents(ctx, false); err != nil {
		t.Fatal(err)
	}
	if err := ps.Relays[0].Restart(ctx); err != nil {
		t.Fatal(err)
	}
	waitPaused(t, ps, victim.Addr, 0)
	if got := quickPair(t, ps, victim, "after"); got != "speculative" {
		t.Errorf("after restoring the pipeline a quick pair on %s rested on %s, want speculative", victim.ID, got)
	}
}

// quickPair sends a fresh prompt twice in a row, pinned to ep by the subset
// hint, and returns the basis of the second request's decision.
func quickPair(t *testing.T, ps *harness.PrefixStack, ep *harness.EventSim, tag string) string {
	t.Helper()
	hint := map[string]string{subsetHint: ep.Addr}
	prompt := words("pair-"+tag, 40)
	for i := range 2 {
		r, status := send(t, ps.URL("/v1/completions"), prompt, hint)
		if status != 200 || r.simID != ep.ID {
			t.Fatalf("request %d of pair %s answered %d by %s, want 200 by %s", i, tag, status, r.simID, ep.ID)
		}
		if i == 1 {
			return r.decision.basis
		}
	}
	return ""
}

// checkPauseRows: /debug/ttl marks the cut endpoint paused with a reason,
// and the other not.
func checkPauseRows(t *testing.T, ps *harness.PrefixStack, cut, intact string) {
	t.Helper()
	rep := ttlReport(t, ps.Router)
	if row, ok := rowFor(rep, cut); !ok || !row.Paused || row.PauseReason == "" || row.Trust != 0 {
		t.Errorf("row for the cut %s: %+v (found %v), want paused with a reason and trust 0", cut, row, ok)
	}
	if row, ok := rowFor(rep, intact); ok && row.Paused {
		t.Errorf("row for %s paused (%s) while its pipeline is intact", intact, row.PauseReason)
	}
}
