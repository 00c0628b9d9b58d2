package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/internal/testwait"
)

// TestRelayRestartRebuildsRouterView checks that a relay stopped with
// SIGTERM (its leaving heartbeat clears the endpoint on the router) and
// started again republishes the engine's replay buffer, so the router's
// confirmed entries for that endpoint equal the simulator's true block set
// again without any new traffic. JetStream is off: only the relay can
// restore what the router forgot.
func TestRelayRestartRebuildsRouterView(t *testing.T) {
	ps := newPrefixStack(t, harness.PrefixOptions{Sims: 2})
	ctx := context.Background()
	s, relay := ps.EventSims[0], ps.Relays[0]
	for i := 0; ; i++ {
		complete(t, ps, words(fmt.Sprintf("restart%d", i), 30), nil)
		if c, err := s.Cache(ctx); err == nil && c.Distinct() >= 4 && i >= 5 {
			break
		}
		if i == 40 {
			t.Fatalf("40 prefixes left %s with too few cached blocks", s.ID)
		}
	}
	waitConverged(t, ps, "before the relay restart")
	before, err := s.Cache(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := relay.Stop(); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 5*time.Second, func() string {
		if n, err := ps.Router.IndexEntries(ctx, s.Addr); err != nil || n.Confirmed != 0 {
			return fmt.Sprintf("router still holds %+v (%v) for %s after its relay left", n, err, s.ID)
		}
		return ""
	})
	if err := relay.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	waitConverged(t, ps, "after the relay restart, without new traffic")
	after, err := s.Cache(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.Distinct() != before.Distinct() {
		t.Fatalf("%s's cache changed across the relay restart (%d -> %d blocks): the test sent traffic it should not have",
			s.ID, before.Distinct(), after.Distinct())
	}
	m, err := harness.Scrape(ctx, "http://"+relay.AdminAddr+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	if n := m.Sum("warmroute_events_relay_resyncs_total", map[string]string{"outcome": "complete"}); n != 1 {
		t.Fatalf("restarted relay counted %v complete resyncs, want 1", n)
	}
}
