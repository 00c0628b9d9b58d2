package sim_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/warmroute/warmroute/scorer"
	"github.com/warmroute/warmroute/sim"
)

// TestRouterLearnsMaxModelLen: the router's /v1/models reader understands
// the simulator's answer, so a pool of simulators without a configured
// maxModelLen learns it as one of vLLM engines does.
func TestRouterLearnsMaxModelLen(t *testing.T) {
	for _, n := range []int{128, 32768} {
		s, err := sim.New(sim.Options{Models: []string{"m"}, MaxModelLen: n})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(s.Handler())
		got, err := scorer.FetchMaxModelLen(context.Background(), http.DefaultClient, strings.TrimPrefix(srv.URL, "http://"))
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got != n {
			t.Errorf("learned max_model_len %d, want %d", got, n)
		}
	}
}
