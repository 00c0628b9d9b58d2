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

// replicaConversation is one /v1/responses conversation chained by
// previous_response_id through a replica stack's Envoy.
type replicaConversation struct {
	t                    *testing.T
	rs                   *harness.ReplicaStack
	instructions, prefix string
	storing, prev        string
	turns                int
}

// affinityHits is each replica's warmroute_affinity_lookups_total{hit}.
func affinityHits(t *testing.T, rs *harness.ReplicaStack) []float64 {
	out := make([]float64, len(rs.Routers))
	for i, r := range rs.Routers {
		out[i] = routerMetrics(t, r).Sum("warmroute_affinity_lookups_total", map[string]string{"result": "hit"})
	}
	return out
}

// turn sends the next turn, checks it was served by the engine storing the
// conversation, and waits until every replica holds every id learnt so far.
// It returns the replica whose affinity hits grew (-1 for none).
func (c *replicaConversation) turn() int {
	t, rs, i := c.t, c.rs, c.turns
	t.Helper()
	before := affinityHits(t, rs)
	req := map[string]any{"model": rs.Model, "max_output_tokens": 8, "instructions": c.instructions,
		"input": fmt.Sprintf("Step %d: %s", i, words(fmt.Sprintf("%s%d", c.prefix, i), 8))}
	if c.prev != "" {
		req["previous_response_id"] = c.prev
	}
	r := mustDo(t, http.MethodPost, rs.URL("/v1/responses"), mustJSON(t, req), nil)
	if r.status != http.StatusOK {
		t.Fatalf("turn %d: %d %s", i, r.status, r.body)
	}
	served := r.header.Get("x-warmroute-served-by")
	if c.storing == "" {
		c.storing = served
	} else if served != c.storing {
		t.Fatalf("turn %d went to %s, the conversation is stored on %s", i, served, c.storing)
	}
	var b struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(r.body, &b); err != nil || b.ID == "" {
		t.Fatalf("turn %d: no id in %s", i, r.body)
	}
	c.prev = b.ID
	c.turns++
	// Every replica knows the id before the next turn, whichever learnt it.
	want := float64(c.turns)
	testwait.Until(t, 10*time.Second, func() string {
		for j, rt := range rs.Routers {
			if v := routerMetrics(t, rt).Sum("warmroute_affinity_entries", nil); v != want {
				return fmt.Sprintf("replica %d holds %v response ids, want %v", j, v, want)
			}
		}
		return ""
	})
	decided := -1
	for j, h := range affinityHits(t, rs) {
		if h > before[j] {
			decided = j
		}
	}
	if i > 0 && decided < 0 {
		t.Fatalf("turn %d (previous_response_id) was not an affinity hit on any replica", i)
	}
	return decided
}

// TestResponseAffinityAcrossReplicas: two router replicas behind one Envoy
// share learnt response ids over NATS, so a conversation chained by
// previous_response_id reaches the storing engine whichever replica decides
// each turn, and both replicas route by the id the other learnt.
func TestResponseAffinityAcrossReplicas(t *testing.T) {
	rs := newReplicaStack(t, harness.ReplicaOptions{Sims: 3})
	c := &replicaConversation{t: t, rs: rs, instructions: "You are a replicated agent. " + words("replsys", 30), prefix: "repl"}
	for range 12 {
		c.turn()
	}
	h := affinityHits(t, rs)
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
	c := &replicaConversation{t: t, rs: rs, instructions: "You are a restarted agent. " + words("restartsys", 30), prefix: "restart"}
	const before, after = 6, 6
	for range before {
		c.turn()
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
	for range after {
		if c.turn() == 0 {
			byRestarted++
		}
	}
	if byRestarted == 0 {
		t.Fatal("no turn after the restart was decided by the restarted replica")
	}
	t.Logf("after the restart: %d of %d turns decided by the restarted replica, all on the storing engine", byRestarted, after)
}
