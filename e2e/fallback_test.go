package e2e

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/warmroute/warmroute/e2e/harness"
)

// TestFallbackServesWhenPrimaryIsDead: with fallbacks: 1 and the Envoy
// configuration that knows the model servers (a STATIC cluster behind the
// override_host load balancing policy, one retry), a request whose chosen
// endpoint is dead is retried by Envoy on the fallback warmroute listed,
// succeeds there, and the router counts it as served by a fallback, in both
// ext_proc body modes. Without relays the router cannot tell the stopped
// simulator is gone, so it keeps choosing it for some requests.
func TestFallbackServesWhenPrimaryIsDead(t *testing.T) {
	for _, mode := range modes {
		t.Run(modeName(mode), func(t *testing.T) {
			sims := make([]harness.SimOptions, 2)
			for i := range sims {
				sims[i].Args = simArgs
			}
			st := newStack(t, harness.Options{Template: mode, Sims: sims, Fallbacks: 1})
			// Both alive: every request is served by the endpoint chosen.
			for i := range 4 {
				r := mustDo(t, http.MethodPost, st.URL("/v1/completions"),
					mustJSON(t, completionRequest(fmt.Sprintf("alive %d: %s", i, words("a", 40)), false)), nil)
				if r.status != http.StatusOK {
					t.Fatalf("request %d with both alive: %v", i, r)
				}
			}
			if m := scrape(t, st); m.Sum("warmroute_extproc_served_total", map[string]string{"result": "fallback"}) != 0 {
				t.Fatalf("fallbacks served while every endpoint was alive")
			}
			dead := st.Sims[0]
			if err := dead.Stop(); err != nil {
				t.Fatalf("stopping %s: %v", dead.ID, err)
			}
			const n = 12
			for i := range n {
				r := mustDo(t, http.MethodPost, st.URL("/v1/completions"),
					mustJSON(t, completionRequest(fmt.Sprintf("dead %d: %s", i, words("d", 40)), false)), nil)
				if r.status != http.StatusOK {
					t.Fatalf("request %d with %s dead: %v", i, dead.ID, r)
				}
				if got := servedBy(t, st, r); got != st.Sims[1].ID {
					t.Errorf("request %d served by %s, want the live %s", i, got, st.Sims[1].ID)
				}
			}
			m := scrape(t, st)
			fallback := m.Sum("warmroute_extproc_served_total", map[string]string{"result": "fallback"})
			chosen := m.Sum("warmroute_extproc_served_total", map[string]string{"result": "chosen"})
			t.Logf("%s dead: %v of %d requests served by their fallback, %v by the endpoint chosen (%v before)",
				dead.ID, fallback, n, chosen-4, 4)
			if fallback < 1 {
				t.Errorf("no request was served by its fallback: the router never chose the dead endpoint, so the test proves nothing")
			}
			if fallback+chosen != n+4 {
				t.Errorf("served_total fallback %v + chosen %v, want %d reports", fallback, chosen, n+4)
			}
			if u := m.Sum("warmroute_extproc_served_total", map[string]string{"result": "unlisted"}); u != 0 {
				t.Errorf("%v requests served by an endpoint warmroute did not list", u)
			}
		})
	}
}
