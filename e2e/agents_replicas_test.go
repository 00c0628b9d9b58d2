package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/internal/testwait"
)

// TestResponseAffinityAcrossReplicas: two router replicas behind one Envoy
// share learnt response ids over NATS, so a conversation chained by
// previous_response_id reaches the storing engine whichever replica decides
// each turn, and both replicas route by the id the other learnt.
func TestResponseAffinityAcrossReplicas(t *testing.T) {
	rs := newReplicaStack(t, harness.ReplicaOptions{Sims: 3})
	instructions := "You are a replicated agent. " + words("replsys", 30)
	var storing, prev string
	hits := func() []float64 {
		out := make([]float64, len(rs.Routers))
		for i, r := range rs.Routers {
			out[i] = routerMetrics(t, r).Sum("warmroute_affinity_lookups_total", map[string]string{"result": "hit"})
		}
		return out
	}
	for i := range 12 {
		req := map[string]any{"model": rs.Model, "max_output_tokens": 8, "instructions": instructions,
			"input": fmt.Sprintf("Step %d: %s", i, words(fmt.Sprintf("repl%d", i), 8))}
		if prev != "" {
			req["previous_response_id"] = prev
		}
		r := mustDo(t, http.MethodPost, rs.URL("/v1/responses"), mustJSON(t, req), nil)
		if r.status != http.StatusOK {
			t.Fatalf("turn %d: %d %s", i, r.status, r.body)
		}
		served := r.header.Get("x-warmroute-served-by")
		if storing == "" {
			storing = served
		} else if served != storing {
			t.Fatalf("turn %d went to %s, the conversation is stored on %s", i, served, storing)
		}
		var b struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(r.body, &b); err != nil || b.ID == "" {
			t.Fatalf("turn %d: no id in %s", i, r.body)
		}
		prev = b.ID
		// Both replicas know the id before the next turn, whichever learnt it.
		want := float64(i + 1)
		testwait.Until(t, 10*time.Second, func() string {
			for j, rt := range rs.Routers {
				if v := routerMetrics(t, rt).Sum("warmroute_affinity_entries", nil); v != want {
					return fmt.Sprintf("replica %d holds %v response ids, want %v", j, v, want)
				}
			}
			return ""
		})
	}
	h := hits()
	t.Logf("affinity hits per replica: %v", h)
	if h[0]+h[1] != 11 {
		t.Fatalf("affinity hits %v, want 11 in all", h)
	}
	var remote float64
	for _, rt := range rs.Routers {
		remote += routerMetrics(t, rt).Sum("warmroute_affinity_learned_total", map[string]string{"source": "remote"})
	}
	if remote != 12 {
		t.Fatalf("ids learnt from the other replica: %v, want 12 (each id learnt by one, shared with the other)", remote)
	}
}

// TestResponseAffinityReplicaRestart: with JetStream on, a replica restarted
// in the middle of a conversation (a crash or a rolling update) replays the
// response ids the stream holds, so the turns it decides after the restart
// still reach the storing engine by id, including ids it never saw itself.
func TestResponseAffinityReplicaRestart(t *testing.T) {
	rs := newReplicaStack(t, harness.ReplicaOptions{Sims: 3, JetStream: true})
	instructions := "You are a restarted agent. " + words("restartsys", 30)
	var storing, prev string
	turn := func(i int) (decidedBy int) {
		t.Helper()
		before := make([]float64, len(rs.Routers))
		for j, r := range rs.Routers {
			before[j] = routerMetrics(t, r).Sum("warmroute_affinity_lookups_total", map[string]string{"result": "hit"})
		}
		req := map[string]any{"model": rs.Model, "max_output_tokens": 8, "instructions": instructions,
			"input": fmt.Sprintf("Step %d: %s", i, words(fmt.Sprintf("restart%d", i), 8))}
		if prev != "" {
			req["previous_response_id"] = prev
		}
		r := mustDo(t, http.MethodPost, rs.URL("/v1/responses"), mustJSON(t, req), nil)
		if r.status != http.StatusOK {
			t.Fatalf("turn %d: %d %s", i, r.status, r.body)
		}
		served := r.header.Get("x-warmroute-served-by")
		if storing == "" {
			storing = served
		} else if served != storing {
			t.Fatalf("turn %d went to %s, the conversation is stored on %s", i, served, storing)
		}
		var b struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(r.body, &b); err != nil || b.ID == "" {
			t.Fatalf("turn %d: no id in %s", i, r.body)
		}
		prev = b.ID
		decidedBy = -1
		for j, rt := range rs.Routers {
			if routerMetrics(t, rt).Sum("warmroute_affinity_lookups_total", map[string]string{"result": "hit"}) > before[j] {
				decidedBy = j
			}
		}
		if i > 0 && decidedBy < 0 {
			t.Fatalf("turn %d (previous_response_id) was not an affinity hit on any replica", i)
		}
		// Both replicas know the id before the next turn.
		testwait.Until(t, 10*time.Second, func() string {
			for j, rt := range rs.Routers {
				if v := routerMetrics(t, rt).Sum("warmroute_affinity_entries", nil); v < float64(i+1) {
					return fmt.Sprintf("replica %d holds %v response ids, want %d", j, v, i+1)
				}
			}
			return ""
		})
		return decidedBy
	}
	const before, after = 6, 6
	for i := range before {
		turn(i)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := rs.RestartRouter(ctx, 0); err != nil {
		t.Fatal(err)
	}
	replayed := routerMetrics(t, rs.Routers[0]).Sum("warmroute_affinity_learned_total", map[string]string{"source": "replay"})
	if replayed != before {
		t.Fatalf("the restarted replica replayed %v response ids, want %d", replayed, before)
	}
	byRestarted := 0
	for i := before; i < before+after; i++ {
		if turn(i) == 0 {
			byRestarted++
		}
	}
	if byRestarted == 0 {
		t.Fatal("no turn after the restart was decided by the restarted replica")
	}
	t.Logf("after the restart: %d of %d turns decided by the restarted replica, all on the storing engine", byRestarted, after)
}
