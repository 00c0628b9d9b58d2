package e2e

import (
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
