package e2e

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/warmroute/warmroute/e2e/harness"
)

// TestLoadSpreads sends distinct prompts concurrently, each held briefly by
// the simulator, and checks every simulator takes a fair share: with no
// cached prefix to prefer, in-flight load must decide.
func TestLoadSpreads(t *testing.T) {
	const total, concurrency = 60, 12
	st := newStack(t, harness.Options{})
	counts := map[string]int{}
	var mu sync.Mutex
	sem := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	for i := range total {
		body := mustJSON(t, completionRequest(fmt.Sprintf("request %d asks something different", i), false))
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			r, err := do(t.Context(), http.MethodPost, st.URL("/v1/completions"), body, map[string]string{"x-sim-delay": "150ms"})
			mu.Lock()
			defer mu.Unlock()
			if err != nil || r.status != http.StatusOK {
				t.Errorf("request %d: %v %v", i, r, err)
				return
			}
			counts[r.header.Get("x-warmroute-served-by")]++
		})
	}
	wg.Wait()
	for _, s := range st.Sims {
		if counts[s.ID] < total/12 {
			t.Errorf("%s served %d of %d requests, want at least %d; all: %v", s.ID, counts[s.ID], total, total/12, counts)
		}
	}
}

// TestSubsetHint checks that a gateway's envoy.lb.subset_hint metadata
// (here set by the test-only Lua filter) restricts the router's choice.
func TestSubsetHint(t *testing.T) {
	st := newStack(t, harness.Options{})
	only := st.Sims[1]
	for i := range 9 {
		body := mustJSON(t, completionRequest(fmt.Sprintf("subset %d", i), false))
		r := mustDo(t, http.MethodPost, st.URL("/v1/completions"), body, map[string]string{"x-e2e-subset-hint": only.Addr})
		checkRouted(t, st, r)
		if id := servedBy(t, st, r); id != only.ID {
			t.Fatalf("request %d served by %s, want %s (the only endpoint in the subset)", i, id, only.ID)
		}
	}
}
