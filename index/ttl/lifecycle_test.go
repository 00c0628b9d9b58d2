package ttl

import (
	"testing"
	"time"

	"github.com/warmroute/warmroute/index"
)

// TestEndingsAccounting follows one 4-block decision whose blocks end in
// every way: two confirmed on time, one after expiry (early expiry), one
// never (stale expiry); plus a dropped block of another decision.
func TestEndingsAccounting(t *testing.T) {
	h := newHarness(t, Config{}, func(o *Options) { o.Replica = "r1" })
	ep, model := "10.0.0.1:8000", "llama"
	h.Begin(1, Route{Endpoint: ep, Model: model, PromptTokens: 2000, NewSpeculative: 4, BlockSize: 16, At: t0})
	h.Begin(2, Route{Endpoint: ep, Model: model, PromptTokens: 20000, NewSpeculative: 1, BlockSize: 16, At: t0})
	for _, o := range []index.Outcome{
		{Kind: index.Confirmed, Endpoint: ep, Decision: 1, Blocks: 2, Latency: 300 * time.Millisecond},
		{Kind: index.EarlyExpiry, Endpoint: ep, Decision: 1, Blocks: 1, Latency: 2400 * time.Millisecond},
		{Kind: index.Dropped, Endpoint: ep, Decision: 2, Blocks: 1},
		{Kind: index.StaleExpiry, Endpoint: ep, Decision: 1, Blocks: 1, Latency: 2 * time.Second},
	} {
		h.Observe(o)
	}
	for ending, want := range map[string]float64{"confirmed": 2, "early_expiry": 1, "stale_expiry": 1, "dropped": 1} {
		if got := h.value(t, "warmroute_ttl_endings_total", map[string]string{"endpoint": ep, "model": model, "ending": ending}); got != want {
			t.Errorf("endings{%s} = %v, want %v", ending, got, want)
		}
	}
	hist := []struct {
		block, ending string
		sum           float64
	}{
		{"first", "confirmed", 0.3},
		{"last", "early_expiry", 2.4},
	}
	for _, hh := range hist {
		m := h.metric(t, "warmroute_ttl_confirmation_latency_seconds", map[string]string{"endpoint": ep, "model": model,
			"prompt_class": "lt4k", "replica": "r1", "block": hh.block, "ending": hh.ending})
		if m == nil || m.Histogram.GetSampleCount() != 1 || !near(m.Histogram.GetSampleSum(), hh.sum) {
			t.Errorf("latency{block=%s,ending=%s} = %v, want one sample of %v", hh.block, hh.ending, m, hh.sum)
		}
	}
	rep := h.Report()
	want := Endings{Confirmed: 2, EarlyExpiry: 1, StaleExpiry: 1, Dropped: 1}
	if len(rep.Rows) != 1 || rep.Rows[0].Endings != want || rep.Overall.Endings != want {
		t.Fatalf("report endings %+v, want %+v", rep.Rows, want)
	}
	// The decision closed with a stale block: one failed decision, 16 tokens.
	if e := rep.Rows[0].Exposure; !near(e.FailureProbability, 0.5) || !near(e.StaleTokens, 8) {
		t.Fatalf("exposure %+v, want failure 1/2 (decision 2 closed by its drop), 8 stale tokens per decision", e)
	}
	if rep.Decisions != 0 {
		t.Fatalf("%d decisions still tracked after every block ended", rep.Decisions)
	}
}

// TestUnattributedOutcomes: outcomes of decisions this replica did not
// begin, or naming another endpoint than the decision's, count under the
// model "_unknown" and feed no latency.
func TestUnattributedOutcomes(t *testing.T) {
	h := newHarness(t, Config{})
	h.Begin(1, Route{Endpoint: "a", Model: "m", NewSpeculative: 1, BlockSize: 16, At: t0})
	h.Observe(index.Outcome{Kind: index.Confirmed, Endpoint: "b", Decision: 1, Blocks: 1, Latency: time.Millisecond})
	h.Observe(index.Outcome{Kind: index.StaleExpiry, Endpoint: "a", Decision: 99, Blocks: 3})
	h.Observe(index.Outcome{Kind: index.StaleExpiry, Endpoint: "a", Decision: 98, Blocks: 0}) // nothing ended: ignored
	if got := h.value(t, "warmroute_ttl_endings_total", map[string]string{"endpoint": "b", "model": labelUnknown, "ending": "confirmed"}); got != 1 {
		t.Fatalf("unattributed confirmed = %v, want 1", got)
	}
	if got := h.value(t, "warmroute_ttl_endings_total", map[string]string{"endpoint": "a", "model": labelUnknown, "ending": "stale_expiry"}); got != 3 {
		t.Fatalf("unattributed stale = %v, want 3", got)
	}
	if adv := h.Report().Overall.Advice; adv.Samples != 0 {
		t.Fatalf("unattributed confirmation fed the advisor: %+v", adv)
	}
}

// TestRemoteOutcomesIgnored: another replica's predictions end in this
// replica's index too, but only the deciding replica counts them, even when
// their decision id equals one begun here.
func TestRemoteOutcomesIgnored(t *testing.T) {
	h := newHarness(t, Config{})
	h.Begin(1, Route{Endpoint: "a", Model: "m", NewSpeculative: 2, BlockSize: 16, At: t0})
	for _, kind := range []index.OutcomeKind{index.Confirmed, index.EarlyExpiry, index.StaleExpiry, index.Dropped} {
		h.Observe(index.Outcome{Kind: kind, Endpoint: "a", Decision: 1, Blocks: 1, Latency: time.Millisecond, Remote: true})
		h.Observe(index.Outcome{Kind: kind, Endpoint: "a", Decision: 77, Blocks: 1, Latency: time.Millisecond, Remote: true})
	}
	rep := h.Report()
	if rep.Overall.Endings != (Endings{}) || rep.Decisions != 1 {
		t.Fatalf("remote outcomes counted: endings %+v, %d decisions tracked (want none, 1)", rep.Overall.Endings, rep.Decisions)
	}
	h.Observe(index.Outcome{Kind: index.Confirmed, Endpoint: "a", Decision: 1, Blocks: 2, Latency: time.Millisecond})
	if got := h.value(t, "warmroute_ttl_endings_total", map[string]string{"endpoint": "a", "model": "m", "ending": "confirmed"}); got != 2 {
		t.Fatalf("local confirmations after remote ones = %v, want 2", got)
	}
}

func TestPromptClasses(t *testing.T) {
	tests := []struct {
		tokens int
		want   string
	}{{0, "lt1k"}, {1023, "lt1k"}, {1024, "lt4k"}, {4095, "lt4k"}, {4096, "lt16k"}, {16383, "lt16k"}, {16384, "ge16k"}, {1 << 30, "ge16k"}}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := classOf(tt.tokens).String(); got != tt.want {
				t.Fatalf("classOf(%d) = %s, want %s", tt.tokens, got, tt.want)
			}
		})
	}
}

// TestMovedFollowsTheServedEndpoint: a decision moved to the fallback that
// served is followed there (its confirmations are attributed to the served
// endpoint, with their latency), no longer on the chosen endpoint, whose
// old record no longer waits for usage.
func TestMovedFollowsTheServedEndpoint(t *testing.T) {
	h := newHarness(t, Config{})
	chosen, served := "10.0.0.1:8000", "10.0.0.2:8000"
	h.Begin(1, Route{Endpoint: chosen, Model: "m", PromptTokens: 100, NewSpeculative: 2, MatchedSpeculative: 1, BlockSize: 16, At: t0})
	// As Decision.Served does: the chosen endpoint's predictions are
	// withdrawn (ending on its record), then the route moves.
	h.Observe(index.Outcome{Kind: index.StaleExpiry, Endpoint: chosen, Decision: 1, Blocks: 2})
	h.Moved(1, Route{Endpoint: served, Model: "m", PromptTokens: 100, NewSpeculative: 3, BlockSize: 16, At: t0})
	h.Observe(index.Outcome{Kind: index.Confirmed, Endpoint: served, Decision: 1, Blocks: 3, Latency: 200 * time.Millisecond})
	if got := h.value(t, "warmroute_ttl_endings_total", map[string]string{"endpoint": served, "model": "m", "ending": "confirmed"}); got != 3 {
		t.Errorf("served endpoint's confirmed endings = %v, want 3 attributed to model m", got)
	}
	if got := h.value(t, "warmroute_ttl_endings_total", map[string]string{"endpoint": chosen, "model": "m", "ending": "stale_expiry"}); got != 2 {
		t.Errorf("chosen endpoint's withdrawn predictions = %v stale endings on its record, want 2", got)
	}
	m := h.metric(t, "warmroute_ttl_confirmation_latency_seconds", map[string]string{"endpoint": served, "model": "m", "block": "first"})
	if m == nil || m.Histogram.GetSampleCount() != 1 {
		t.Errorf("served endpoint's first-block latency %v, want one sample", m)
	}
	// The moved route claimed no match, so no usage is awaited: the
	// decision is forgotten once its blocks ended.
	h.Usage(1, 100, 0, true)
	if got := h.value(t, "warmroute_ttl_speculative_routes_total", map[string]string{"endpoint": chosen, "model": "m", "result": "miss"}); got != 0 {
		t.Errorf("the fallback's usage judged the chosen endpoint's prediction: %v misses", got)
	}
	if n := h.Report().Decisions; n != 0 {
		t.Errorf("%d decisions still tracked", n)
	}
}
