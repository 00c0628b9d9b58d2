package scorer

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/internal/testwait"
)

// engineModels serves /v1/models with body and counts the requests.
func engineModels(t *testing.T, status int, body string) (endpoint string, hits *atomic.Int64) {
	hits = &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		hits.Add(1)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), hits
}

func TestLearnMaxModelLen(t *testing.T) {
	tests := []struct {
		name       string
		configured int
		status     int
		body       string
		want       int // the pool's token limit once settled
		wantResult string
		wantAsked  bool
	}{
		{name: "vllm shape", status: 200, want: 100, wantResult: "ok", wantAsked: true,
			body: `{"object":"list","data":[{"id":"m","object":"model","max_model_len":100},{"id":"lora-a","max_model_len":100,"parent":"m"}]}`},
		{name: "smallest listed wins", status: 200, want: 64, wantResult: "ok", wantAsked: true,
			body: `{"data":[{"id":"m","max_model_len":100},{"id":"n","max_model_len":64}]}`},
		{name: "configured wins, never asked", configured: 1000, status: 200, want: 1000, wantAsked: false,
			body: `{"data":[{"id":"m","max_model_len":100}]}`},
		{name: "no max_model_len", status: 200, body: `{"data":[{"id":"m"}]}`, want: 0, wantResult: "missing", wantAsked: true},
		{name: "engine error", status: 500, body: `oops`, want: 0, wantResult: "error", wantAsked: true},
		{name: "not json", status: 200, body: `<html>`, want: 0, wantResult: "error", wantAsked: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			endpoint, hits := engineModels(t, tt.status, tt.body)
			m, err := NewMetrics(prometheus.NewRegistry())
			if err != nil {
				t.Fatal(err)
			}
			pools := NewPools([]PoolConfig{{Name: "m", Endpoints: []string{endpoint}, MaxModelLen: tt.configured}}, "")
			s := New(pools, &Load{}, Options{Metrics: m, LearnMaxModelLen: true})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); _ = s.Run(ctx, time.Hour) }()
			defer func() { cancel(); <-done }()
			pl := pools.byName["m"]
			if tt.wantResult != "" {
				testwait.Until(t, 10*time.Second, testwait.That("fetch counted", func() bool {
					return testutil.ToFloat64(m.modelLenFetches.WithLabelValues(tt.wantResult)) >= 1
				}))
			}
			if got := pl.limitOf().maxTokens; got != tt.want {
				t.Errorf("token limit = %d, want %d", got, tt.want)
			}
			if (hits.Load() > 0) != tt.wantAsked {
				t.Errorf("engine asked %d times, want asked %v", hits.Load(), tt.wantAsked)
			}
		})
	}
}

// TestLearnedMaxModelLenBoundsPrompts: once learned, the engine's
// max_model_len refuses longer prompts as a configured one does.
func TestLearnedMaxModelLenBoundsPrompts(t *testing.T) {
	endpoint, _ := engineModels(t, 200, `{"data":[{"id":"m","max_model_len":10}]}`)
	ix, _ := index.New(index.Options{BlockSize: bs})
	pools := NewPools([]PoolConfig{{Name: "m", Endpoints: []string{endpoint}}}, "")
	s := New(pools, &Load{}, Options{Index: ix, Tokens: map[string]Tokens{"m": &byteTokens{}}, LearnMaxModelLen: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Run(ctx, time.Hour) }()
	defer func() { cancel(); <-done }()
	testwait.Until(t, 10*time.Second, testwait.That("max_model_len learned", func() bool {
		return pools.byName["m"].limitOf().maxTokens == 10
	}))
	for _, tc := range []struct {
		n       int
		tooLong bool
	}{{10, false}, {11, true}} {
		d, err := s.Pick(context.Background(), textPrompt(tc.n))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(d.Reason, "too_long"); got != tc.tooLong {
			t.Errorf("%d-token prompt: reason %q, want too long %v", tc.n, d.Reason, tc.tooLong)
		}
		d.Release()
	}
}
