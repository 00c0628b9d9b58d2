package ttl

import (
	"testing"
	"time"

	"github.com/warmroute/warmroute/index"
)

func TestJudgeUsage(t *testing.T) {
	// Route: 2 confirmed + 3 speculative blocks of 16 on a 200-token prompt:
	// 80 tokens expected cached, 32 of them confirmed.
	r := Route{PromptTokens: 200, MatchedConfirmed: 2, MatchedSpeculative: 3, BlockSize: 16}
	tests := []struct {
		name     string
		route    Route
		prompt   int
		cached   int
		known    bool
		want     speculativeResult
		wantLost int
	}{
		{"hit", r, 200, 80, true, resultHit, 0},
		{"more than predicted is a hit", r, 200, 160, true, resultHit, 0},
		{"confirmed only: speculation missed", r, 200, 32, true, resultMiss, 48},
		{"partial", r, 200, 48, true, resultMiss, 32},
		{"nothing cached: confirmed loss not charged", r, 200, 0, true, resultMiss, 48},
		{"absent usage is unknown", r, 200, 0, false, resultUnknown, 0},
		{"engine prompt count wins", r, 0, 80, true, resultHit, 0},
		{"never the last token: capped at prompt-1", Route{PromptTokens: 80, MatchedConfirmed: 2, MatchedSpeculative: 3, BlockSize: 16}, 80, 64, true, resultHit, 0},
		{"predicted blocks beyond the cacheable part", Route{PromptTokens: 33, MatchedConfirmed: 2, MatchedSpeculative: 1, BlockSize: 16}, 33, 0, true, resultUnknown, 0},
		{"no block size", Route{MatchedSpeculative: 1}, 100, 0, true, resultUnknown, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, lost := judgeUsage(&tt.route, tt.prompt, tt.cached, tt.known)
			if got != tt.want || lost != tt.wantLost {
				t.Fatalf("judgeUsage = %s, %d; want %s, %d", resultNames[got], lost, resultNames[tt.want], tt.wantLost)
			}
		})
	}
}

func TestUsageCountsSpeculativeRoutes(t *testing.T) {
	h := newHarness(t, Config{})
	route := func(spec int) Route {
		return Route{Endpoint: "e", Model: "m", PromptTokens: 200, MatchedConfirmed: 2, MatchedSpeculative: spec, BlockSize: 16, At: t0}
	}
	h.Begin(1, route(3))
	h.Begin(2, route(3))
	h.Begin(3, route(3))
	h.Begin(4, route(0)) // used no prediction, created none: not tracked
	h.Usage(1, 200, 80, true)
	h.Usage(2, 200, 32, true)
	h.Usage(3, 200, 0, false)
	h.Usage(4, 200, 0, true)
	h.Usage(1, 200, 0, true)  // a second report for 1 is ignored
	h.Usage(77, 200, 0, true) // never begun
	labels := func(result string) map[string]string {
		return map[string]string{"endpoint": "e", "model": "m", "result": result}
	}
	for result, want := range map[string]float64{"hit": 1, "miss": 1, "unknown": 1} {
		if got := h.value(t, "warmroute_ttl_speculative_routes_total", labels(result)); got != want {
			t.Errorf("routes{%s} = %v, want %v", result, got, want)
		}
	}
	if got := h.value(t, "warmroute_ttl_false_warm_prefill_tokens_total", map[string]string{"endpoint": "e", "model": "m"}); got != 48 {
		t.Fatalf("false warm tokens %v, want 48", got)
	}
	if n := h.tracked(); n != 0 {
		t.Fatalf("%d decisions tracked after their usage", n)
	}
}

// TestUsageTimeout: a speculative route whose usage never comes is counted
// unknown once UsageTimeout has passed beyond its lifecycle.
func TestUsageTimeout(t *testing.T) {
	h := newHarness(t, Config{}, func(o *Options) { o.Limits.UsageTimeout = time.Minute })
	h.Begin(1, Route{Endpoint: "e", Model: "m", MatchedSpeculative: 1, NewSpeculative: 1, BlockSize: 16, At: t0})
	h.Observe(index.Outcome{Kind: index.Confirmed, Endpoint: "e", Decision: 1, Blocks: 1, Latency: time.Millisecond})
	unknown := map[string]string{"endpoint": "e", "model": "m", "result": "unknown"}
	h.clk.Advance(h.lifeSpan + time.Minute - time.Nanosecond)
	h.step(h.clk.Now())
	if got := h.value(t, "warmroute_ttl_speculative_routes_total", unknown); got != 0 || h.tracked() != 1 {
		t.Fatalf("timed out early: unknown=%v tracked=%d", got, h.tracked())
	}
	h.clk.Advance(time.Nanosecond)
	h.step(h.clk.Now())
	if got := h.value(t, "warmroute_ttl_speculative_routes_total", unknown); got != 1 || h.tracked() != 0 {
		t.Fatalf("after timeout: unknown=%v tracked=%d", got, h.tracked())
	}
	h.Usage(1, 100, 16, true) // too late: ignored
	if got := h.value(t, "warmroute_ttl_speculative_routes_total", map[string]string{"endpoint": "e", "model": "m", "result": "hit"}); got != 0 {
		t.Fatalf("late usage counted as hit")
	}
}
