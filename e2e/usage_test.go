package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/openai"
)

const (
	promptTokensMetric = "warmroute_extproc_prompt_tokens_total"
	cachedTokensMetric = "warmroute_extproc_cached_tokens_total"
	usageMetric        = "warmroute_extproc_usage_total"
	servedMetric       = "warmroute_extproc_served_total"
)

// TestRouterReadsUsage sends a streaming and a non-streaming request through
// Envoy (which streams response bodies to the router) to simulators that
// report prompt_tokens_details, and checks the router's usage counters grew
// by exactly what the client was told.
func TestRouterReadsUsage(t *testing.T) {
	for _, mode := range modes {
		t.Run(modeName(mode), func(t *testing.T) {
			sims := make([]harness.SimOptions, 2)
			for i := range sims {
				sims[i].Args = append(slices.Clone(simArgs), "--prompt-tokens-details")
			}
			st := newStack(t, harness.Options{Template: mode, Sims: sims})
			t.Run("streaming", func(t *testing.T) { testUsage(t, st, true) })
			t.Run("non-streaming", func(t *testing.T) { testUsage(t, st, false) })
		})
	}
}

func testUsage(t *testing.T, st *harness.Stack, stream bool) {
	before := scrape(t, st)
	req := completionRequest(fmt.Sprintf("usage through the router, stream=%v: the quick brown fox", stream), stream)
	if stream {
		req["stream_options"] = map[string]any{"include_usage": true}
	}
	r := mustDo(t, http.MethodPost, st.URL("/v1/completions"), mustJSON(t, req), nil)
	if r.status != http.StatusOK {
		t.Fatalf("response %v", r)
	}
	prompt, cached := clientUsage(t, r.body, stream)
	if prompt <= 0 {
		t.Fatalf("simulator reported %d prompt tokens", prompt)
	}
	wantPrompt := before.Sum(promptTokensMetric, nil) + float64(prompt)
	waitMetric(t, st, promptTokensMetric, wantPrompt, 5*time.Second, fmt.Sprintf("(+%d reported to the client)", prompt))
	after := scrape(t, st)
	if got, want := after.Sum(cachedTokensMetric, nil), before.Sum(cachedTokensMetric, nil)+float64(cached); got != want {
		t.Errorf("%s = %v, want %v", cachedTokensMetric, got, want)
	}
	known := map[string]string{"result": "known"}
	if got, want := after.Sum(usageMetric, known), before.Sum(usageMetric, known)+1; got != want {
		t.Errorf("%s{result=known} = %v, want %v", usageMetric, got, want)
	}
	// Envoy reports the endpoint it used (the route's response header);
	// with ORIGINAL_DST it is always the chosen one, and the client never
	// sees the header.
	chosen := map[string]string{"result": "chosen"}
	if got, want := after.Sum(servedMetric, chosen), before.Sum(servedMetric, chosen)+1; got != want {
		t.Errorf("%s{result=chosen} = %v, want %v", servedMetric, got, want)
	}
	if v := r.header.Get(api.ServedHeader); v != "" {
		t.Errorf("the client got %s: %s", api.ServedHeader, v)
	}
}

// clientUsage returns the usage the client received: the body's, or the
// usage event's of a stream.
func clientUsage(t *testing.T, body []byte, stream bool) (prompt, cached int) {
	t.Helper()
	payloads := [][]byte{body}
	if stream {
		events, err := openai.ReadEvents(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		payloads = events
	}
	for _, p := range payloads {
		u, err := openai.DecodeUsage(p)
		if openai.IsDone(p) || err != nil || u == nil {
			continue
		}
		c := u.Cached()
		if c == nil {
			t.Fatalf("usage without cached_tokens: %s", p)
		}
		return u.Prompt(), *c
	}
	t.Fatalf("no usage in the response: %q", body)
	return 0, 0
}
