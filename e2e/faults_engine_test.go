package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/warmroute/warmroute/e2e/harness"
)

func init() {
	faultCases = append(faultCases,
		faultCase{"engine kill -9, idle", func(t *testing.T, f *faultRun) { engineDown(t, f, false, true) }},
		faultCase{"engine kill -9, under traffic", func(t *testing.T, f *faultRun) { engineDown(t, f, true, true) }},
		faultCase{"engine restart, dial topology", func(t *testing.T, f *faultRun) { engineDown(t, f, true, false) }},
		faultCase{"engine restart, listen topology", engineRestartListen},
	)
}

// engineDown stops the simulator holding a prompt's blocks (SIGKILL, or
// SIGTERM for a restart), checks the router knew within one heartbeat and
// sent it nothing afterwards, then starts it again (empty cache, new hash
// seed, sequence from 0) and checks the index forgot what the old process
// held.
func engineDown(t *testing.T, f *faultRun, withTraffic, kill bool) {
	ps := faultPrefixStack(t, harness.PrefixOptions{Sims: 2})
	ctx := context.Background()
	prompts := warmUp(t, ps, "down", 4)
	victim := ps.EventSims[0]
	excluded := counter(t, ps.Router.MetricsURL(), "warmroute_scorer_excluded_endpoints_total", map[string]string{"reason": "disconnected"})
	resets := counter(t, ps.Router.MetricsURL(), "warmroute_events_subscriber_resets_total", map[string]string{"reason": "reconnect"})
	var tr *traffic
	if withTraffic {
		tr = startTraffic(ps, prompts, 2)
		time.Sleep(4 * faultHeartbeat)
	}
	at := time.Now()
	if kill {
		victim.Kill()
	} else if err := victim.Stop(); err != nil {
		t.Fatal(err)
	}
	detected := f.detected(ps.Router, victim.Addr, "disconnected", at, faultHeartbeat)
	if withTraffic {
		time.Sleep(4 * faultHeartbeat)
		noneAfter(t, tr.finish(f), detected, victim.ID)
	} else {
		for range 2 * len(prompts) {
			f.row.requests++
			r, err := do(ctx, "POST", ps.URL("/v1/completions"), mustJSON(t, completionRequest(prompts[f.row.requests%len(prompts)], false)), nil)
			if err != nil || r.status != 200 || r.header.Get("x-warmroute-served-by") == victim.ID {
				f.row.failed++
				t.Errorf("request after detection: %v %v (victim %s)", r, err, victim.ID)
			}
		}
	}
	wantCounter(t, ps.Router.MetricsURL(), "warmroute_scorer_excluded_endpoints_total", map[string]string{"reason": "disconnected"}, excluded, 1)
	restarted := time.Now()
	if err := victim.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	clear := routerLogAfter(t, ps.Router, "endpoint live again", victim.Addr, restarted)
	f.converged(clear, "after the engine came back", stackDivergence(t, ps))
	wantCounter(t, ps.Router.MetricsURL(), "warmroute_events_subscriber_resets_total", map[string]string{"reason": "reconnect"}, resets, 1)
}

// engineRestartListen: the relay listens and the engine connects to it
// (the engine's socket is the one that goes away). A killed engine is seen
// by the relay's health probe; an engine that comes back idle with an empty
// cache must not keep its predecessor's blocks in the index.
func engineRestartListen(t *testing.T, f *faultRun) {
	s := newPyStack(t, pyOptions{engines: 1, listen: true})
	e := s.engines[0]
	s.join(t, e, e.Addr)
	s.do(t, e, "store a 3", "store b 2", "store a 1")
	f.settle("before the kill", s.divergence(t, e.Addr, e))
	resets := counter(t, s.metrics(), "warmroute_events_subscriber_resets_total", map[string]string{"reason": "reconnect"})
	at := time.Now()
	e.Kill()
	f.detected(s.router, e.Addr, "disconnected", at, faultHeartbeat)
	restarted := time.Now()
	if err := e.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	clear := routerLogAfter(t, s.router, "endpoint live again", e.Addr, restarted)
	f.converged(clear, "after the engine restarted idle", s.divergence(t, e.Addr, e))
	wantCounter(t, s.metrics(), "warmroute_events_subscriber_resets_total", map[string]string{"reason": "reconnect"}, resets, 1)
	s.join(t, e, e.Addr)
	s.do(t, e, "store c 2")
	f.converged(time.Now(), "after the restarted engine stored blocks", s.divergence(t, e.Addr, e))
}
