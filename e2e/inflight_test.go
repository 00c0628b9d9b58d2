package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/warmroute/warmroute/e2e/harness"
)

const inflight = "warmroute_scorer_inflight_requests"

// TestInflightReleased checks the router's in-flight accounting returns to
// zero after requests that never complete normally: clients that hang up
// while the simulator stalls, and simulator failures.
func TestInflightReleased(t *testing.T) {
	for _, mode := range modes {
		t.Run(modeName(mode), func(t *testing.T) {
			st := newStack(t, harness.Options{Template: mode})
			t.Run("cancelled", func(t *testing.T) { testCancelled(t, st) })
			t.Run("failed", func(t *testing.T) { testFailed(t, st) })
		})
	}
}

func testCancelled(t *testing.T, st *harness.Stack) {
	const n = 6
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		body := mustJSON(t, completionRequest(fmt.Sprintf("stall %d", i), false))
		// The stall is far longer than the test waits, so in-flight can only
		// return to zero if cancellation releases it.
		wg.Go(func() {
			_, err := do(ctx, http.MethodPost, st.URL("/v1/completions"), body, map[string]string{"x-sim-delay": "60s"})
			errs <- err
		})
	}
	waitMetric(t, st, inflight, n, 10*time.Second, fmt.Sprintf("while %d requests stall", n))
	cancel()
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("stalled request ended with %v, want context.Canceled", err)
		}
	}
	waitMetric(t, st, inflight, 0, 5*time.Second, "after every client hung up")
}

func testFailed(t *testing.T, st *harness.Stack) {
	for i := range 6 {
		body := mustJSON(t, chatRequest(fmt.Sprintf("fail %d", i), i%2 == 0))
		r := mustDo(t, http.MethodPost, st.URL("/v1/chat/completions"), body, map[string]string{"x-sim-status": "500"})
		if r.status != http.StatusInternalServerError {
			t.Fatalf("status = %v, want the simulator's 500", r)
		}
		servedBy(t, st, r)
	}
	waitMetric(t, st, inflight, 0, 5*time.Second, "after failed requests")
}
