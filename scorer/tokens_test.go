package scorer

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/warmroute/warmroute/internal/testwait"
	"github.com/warmroute/warmroute/tokenizer"
	"github.com/warmroute/warmroute/tokenizer/tokenizertest"
)

// fakeEngine answers POST /tokenize with the given ids and records the body.
func fakeEngine(t *testing.T, ids []uint32) (endpoint string, bodies chan map[string]any) {
	t.Helper()
	bodies = make(chan map[string]any, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		bodies <- body
		json.NewEncoder(w).Encode(map[string]any{"count": len(ids), "tokens": ids})
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), bodies
}

func TestRemoteTokens(t *testing.T) {
	ep, bodies := fakeEngine(t, []uint32{5, 6, 7})
	rt := NewRemoteTokens(nil, time.Second)
	tests := []struct {
		name     string
		req      *Request
		want     int
		wantBody string
		wantErr  error
	}{
		{name: "completion", req: &Request{Kind: KindCompletion, Prompts: []string{"hi"}}, want: 3, wantBody: "prompt"},
		{name: "chat", req: &Request{Kind: KindChat, Messages: []Message{{Raw: []byte(`{"role":"user","content":"hi"}`)}}}, want: 3, wantBody: "messages"},
		{name: "ids as given", req: &Request{Kind: KindCompletion, PromptTokenIDs: [][]int{{1, 2}}}, want: 2},
		{name: "chat without raw", req: &Request{Kind: KindChat, Messages: []Message{{Role: "user"}}}, wantErr: ErrNoRawMessage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ids, err := rt.Tokens(context.Background(), tt.req, []string{ep})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil || len(ids) != tt.want {
				t.Fatalf("Tokens = %v, %v; want %d ids", ids, err, tt.want)
			}
			if tt.wantBody != "" {
				if body := <-bodies; body[tt.wantBody] == nil {
					t.Fatalf("engine got %v, want a %q field", body, tt.wantBody)
				}
			}
		})
	}
	if _, err := rt.Tokens(context.Background(), tests[0].req, nil); !errors.Is(err, ErrNoEndpoint) {
		t.Fatalf("no endpoints: err = %v", err)
	}
}

// Drift mode encodes locally on the request path and compares a sample with
// the engine on Run's goroutine; a fake engine that disagrees shows up in
// the tokenizer's drift metric.
func TestDriftTokensComparesOffPath(t *testing.T) {
	tk, err := tokenizer.LoadDir(tokenizertest.Dir(t, "qwen3"))
	if err != nil {
		t.Fatal(err)
	}
	ep, bodies := fakeEngine(t, []uint32{1})
	reg := prometheus.NewRegistry()
	m, err := tokenizer.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	d := NewDriftTokens(NewLocalTokens(tk), 1, m, nil, time.Second)
	ids, err := d.Tokens(context.Background(), &Request{Kind: KindCompletion, Prompts: []string{"hello world"}}, []string{ep})
	if err != nil || len(ids) < 2 {
		t.Fatalf("local ids = %v, %v", ids, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- d.Run(ctx) }()
	<-bodies
	// The comparison is recorded once the engine's answer is read; wait for
	// it (bounded) before stopping Run, or cancelling would fail the call.
	testwait.Until(t, 5*time.Second, testwait.That("drift comparison recorded", func() bool {
		n, _ := testutil.GatherAndCount(reg)
		return n > 0
	}))
	cancel()
	<-done
	want := `
# HELP warmroute_tokenizer_drift_checks_total Sampled requests encoded both locally and by the engine's /tokenize, by outcome. Any disagree means the local tokenizer does not match the engine.
# TYPE warmroute_tokenizer_drift_checks_total counter
warmroute_tokenizer_drift_checks_total{mode="prompt",result="disagree"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
}

func TestRunStopsWithContext(t *testing.T) {
	p := newPipe(t, ScoringConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- p.s.Run(ctx, time.Millisecond) }()
	time.Sleep(5 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}
