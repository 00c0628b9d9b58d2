package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/router"
)

// TestShedWhenEveryEngineWaits: with scoring.shedWaiting 1 and simulators
// that run one request at a time, their relays report the waiting gauge in
// heartbeats. Below the threshold a request routes; once both engines
// report a waiting request, a new request is answered 429 with retry-after
// through the real Envoy; when the queues drain, requests route again.
func TestShedWhenEveryEngineWaits(t *testing.T) {
	ps := newPrefixStack(t, harness.PrefixOptions{
		Sims:      2,
		SimArgs:   []string{"--max-running", "1", "--decode-per-token", "100ms"},
		Configure: func(c *router.Config) { c.Routing.Scoring.ShedWaiting = 1 },
	})
	url := ps.URL("/v1/completions")
	short := func(tag string) []byte {
		return mustJSON(t, map[string]any{"model": model, "prompt": "shed " + tag, "max_tokens": 1})
	}
	if r := mustDo(t, http.MethodPost, url, short("idle"), nil); r.status != http.StatusOK {
		t.Fatalf("idle engines: %v, want 200", r)
	}
	// Four 40-token generations (about 4 s each) on two engines that run
	// one at a time: each engine has one running and one waiting.
	var wg sync.WaitGroup
	long := make([]result, 4)
	for i := range long {
		wg.Go(func() {
			body := mustJSON(t, map[string]any{"model": model, "prompt": fmt.Sprintf("long %d: %s", i, words("l", 20)), "max_tokens": 40})
			r, err := do(context.Background(), http.MethodPost, url, body, nil)
			if err != nil {
				t.Errorf("long request %d: %v", i, err)
			}
			long[i] = r
		})
		time.Sleep(50 * time.Millisecond)
	}
	// Heartbeats (250 ms) carry the waiting gauges to the router.
	shed := waitForShed(t, url, short, 3*time.Second)
	if shed.header.Get("retry-after") == "" {
		t.Errorf("429 without retry-after: %v %v", shed.header, shed)
	}
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(shed.body, &e); err != nil || e.Error.Message == "" {
		t.Errorf("429 body is not an OpenAI-style error: %v", shed)
	}
	wg.Wait()
	for i, r := range long {
		// The last may already meet both queues reported full.
		if r.status != http.StatusOK && (i < len(long)-1 || r.status != http.StatusTooManyRequests) {
			t.Errorf("long request %d: %v, want 200 (429 only for the last)", i, r)
		}
	}
	// Drained: the next heartbeats report no waiting request.
	time.Sleep(time.Second)
	if r := mustDo(t, http.MethodPost, url, short("drained"), nil); r.status != http.StatusOK {
		t.Fatalf("after the queues drained: %v, want 200", r)
	}
}

// waitForShed sends short requests until one is shed (429) and returns it;
// a routed one waits behind the long generations, so they are few.
func waitForShed(t *testing.T, url string, body func(string) []byte, within time.Duration) result {
	t.Helper()
	deadline := time.Now().Add(within)
	for i := 0; ; i++ {
		time.Sleep(500 * time.Millisecond)
		r := mustDo(t, http.MethodPost, url, body(fmt.Sprintf("probe %d", i)), nil)
		if r.status == http.StatusTooManyRequests {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("no 429 within %v with every engine waiting (last %v)", within, r)
		}
	}
}
