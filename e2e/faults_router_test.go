package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/warmroute/warmroute/e2e/harness"
)

func init() {
	faultCases = append(faultCases,
		faultCase{"router restart with JetStream", func(t *testing.T, f *faultRun) { routerRestart(t, f, true) }},
		faultCase{"router restart without JetStream", func(t *testing.T, f *faultRun) { routerRestart(t, f, false) }},
	)
}

// routerRestart kills the router under traffic (Envoy fails closed with 503
// meanwhile) and starts it again: it must hold the engines' blocks at once,
// from the JetStream stream or, without one, from snapshots of the relays'
// mirrors.
func routerRestart(t *testing.T, f *faultRun, jetStream bool) {
	natsd, err := buildNATSD()
	if err != nil {
		t.Fatal(err)
	}
	ps := faultPrefixStack(t, harness.PrefixOptions{Sims: 2, NATSD: natsd, JetStream: jetStream})
	prompts := warmUp(t, ps, "routerrestart", 4)
	tr := startTraffic(ps, prompts, 2)
	time.Sleep(4 * faultHeartbeat)
	killed := time.Now()
	ps.Router.Kill()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := ps.Router.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	clear := time.Now() // ready: the replay, if any, is done
	f.row.note = fmt.Sprintf("router down %v (kill to ready; Envoy answers 503 meanwhile)", clear.Sub(killed).Round(100*time.Millisecond))
	tr.finish(f)
	f.converged(clear, "after the router restarted", stackDivergence(t, ps))
	if !jetStream {
		// Without a stream the index comes from the relays' mirrors.
		wantCounter(t, ps.Router.MetricsURL(), "warmroute_events_subscriber_syncs_total",
			map[string]string{"reason": "start", "result": "ok"}, 0, float64(len(ps.Sims)))
	}
}
