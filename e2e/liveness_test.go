package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/internal/testwait"
)

// TestDeadEngineGetsNoTraffic: an engine killed with SIGKILL while the
// router holds its blocks confirmed stops being a candidate once its relay
// reports it disconnected. Requests for the prefix it held then succeed on
// the live endpoint instead of being sent to the dead one (a 503 through
// Envoy), and the exclusion shows in the router's metrics.
func TestDeadEngineGetsNoTraffic(t *testing.T) {
	ps := newPrefixStack(t, harness.PrefixOptions{Sims: 2})
	prompt := words("deadengine", 64)
	first := complete(t, ps, prompt, nil)
	victim := simByID(t, ps, first.simID)
	toks := tokenize(t, victim, prompt)
	testwait.Until(t, 10*time.Second, func() string {
		if l := lookupOn(t, ps, toks, victim.Addr); l.Confirmed == 0 {
			return fmt.Sprintf("%s holds no confirmed block of the prompt yet", victim.Addr)
		}
		return ""
	})
	if r := complete(t, ps, prompt, nil); r.simID != victim.ID || r.decision.basis != "confirmed" {
		t.Fatalf("before the kill the prompt went to %s on %s, want %s on confirmed blocks", r.simID, r.decision.basis, victim.ID)
	}
	killed := time.Now()
	victim.Kill()
	testwait.Until(t, 20*time.Second, func() string {
		if v := scrapeValue(t, ps, "warmroute_scorer_endpoints", map[string]string{"pool": ps.Model, "state": "down"}); v != 1 {
			return fmt.Sprintf("down endpoints %v, want 1", v)
		}
		return ""
	})
	t.Logf("engine death detected %v after the kill", time.Since(killed).Round(time.Millisecond))
	for i := range 5 {
		r := complete(t, ps, prompt, nil) // fails the test on a non-200
		if r.simID == victim.ID {
			t.Fatalf("request %d after detection went to the dead engine", i)
		}
	}
	if v := scrapeValue(t, ps, "warmroute_scorer_excluded_endpoints_total", map[string]string{"reason": "disconnected"}); v < 5 {
		t.Fatalf("excluded{disconnected} = %v after 5 requests, want at least 5", v)
	}
}

// scrapeValue reads one series from the router's metrics; -1 when absent.
func scrapeValue(t *testing.T, ps *harness.PrefixStack, name string, labels map[string]string) float64 {
	t.Helper()
	m, err := harness.Scrape(context.Background(), ps.Router.MetricsURL())
	if err != nil {
		t.Fatal(err)
	}
	v, ok := m.Value(name, labels)
	if !ok {
		return -1
	}
	return v
}
