package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/internal/testwait"
)

// TestRouterRestart stops the router while Envoy keeps running: requests in
// the gap must fail promptly (Envoy fails closed with 503, never waiting or
// routing blindly), and once the router is back on the same port requests
// must succeed again without touching Envoy.
func TestRouterRestart(t *testing.T) {
	st := newStack(t, harness.Options{})
	body := mustJSON(t, completionRequest("before, during and after", false))
	checkRouted(t, st, mustDo(t, http.MethodPost, st.URL("/v1/completions"), body, nil))

	if err := st.Router.Stop(); err != nil {
		t.Fatalf("stopping router: %v", err)
	}
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		r, err := do(ctx, http.MethodPost, st.URL("/v1/completions"), body, nil)
		cancel()
		if err != nil {
			t.Fatalf("request while the router is down did not get an answer: %v", err)
		}
		if r.status != http.StatusServiceUnavailable {
			t.Fatalf("status while the router is down = %v, want 503 (status_on_error)", r)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := st.Router.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	var r result
	testwait.Until(t, 15*time.Second, func() string {
		var err error
		r, err = do(context.Background(), http.MethodPost, st.URL("/v1/completions"), body, nil)
		if err != nil || r.status != http.StatusOK {
			return fmt.Sprintf("no success since the router came back: last %v %v", r, err)
		}
		return ""
	})
	checkRouted(t, st, r)
}
