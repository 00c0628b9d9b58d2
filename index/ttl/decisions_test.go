package ttl

import (
	"testing"
	"time"

	"github.com/warmroute/warmroute/index"
)

func TestDecisionTableIsBounded(t *testing.T) {
	h := newHarness(t, Config{}, func(o *Options) { o.Limits.MaxDecisions = 32 })
	for i := range 100 {
		h.Begin(index.DecisionID(i), Route{Endpoint: "e", Model: "m", NewSpeculative: 1, BlockSize: 16, At: t0})
	}
	if n := h.tracked(); n != 32 {
		t.Fatalf("%d decisions tracked, want the bound 32", n)
	}
	if got := h.value(t, "warmroute_ttl_decision_drops_total", map[string]string{"reason": "full"}); got != 68 {
		t.Fatalf("full drops %v, want 68", got)
	}
	// An untracked decision's outcome still counts, unattributed.
	h.Observe(index.Outcome{Kind: index.Confirmed, Endpoint: "e", Decision: 99, Blocks: 1, Latency: time.Millisecond})
	if got := h.value(t, "warmroute_ttl_endings_total", map[string]string{"endpoint": "e", "model": labelUnknown, "ending": "confirmed"}); got != 1 {
		t.Fatalf("untracked outcome not counted: %v", got)
	}
}

// TestDecisionsExpire: decisions whose blocks the index never reports are
// forgotten after MaxStale + Grace + margin and counted; their slots are
// reusable.
func TestDecisionsExpire(t *testing.T) {
	h := newHarness(t, Config{}, func(o *Options) { o.Limits.MaxDecisions, o.Grace = 16, time.Second })
	for i := range 16 {
		h.Begin(index.DecisionID(i), Route{Endpoint: "e", Model: "m", NewSpeculative: 2, BlockSize: 16, At: t0})
	}
	h.clk.Advance(DefaultMaxStale + time.Second + decisionMargin - time.Nanosecond)
	h.step(h.clk.Now())
	if n := h.tracked(); n != 16 {
		t.Fatalf("forgotten early: %d tracked", n)
	}
	h.clk.Advance(time.Nanosecond)
	h.step(h.clk.Now())
	if n := h.tracked(); n != 0 {
		t.Fatalf("%d decisions tracked past their deadline", n)
	}
	if got := h.value(t, "warmroute_ttl_decision_drops_total", map[string]string{"reason": "expired"}); got != 16 {
		t.Fatalf("expired drops %v, want 16", got)
	}
	// An id reused later is a new decision, not the old one.
	h.Begin(3, Route{Endpoint: "e", Model: "m", NewSpeculative: 1, BlockSize: 16, At: h.clk.Now()})
	h.Observe(index.Outcome{Kind: index.Confirmed, Endpoint: "e", Decision: 3, Blocks: 1, Latency: 40 * time.Millisecond})
	if adv := h.Report().Overall.Advice; adv.Samples != 1 || adv.Max.D() != 40*time.Millisecond {
		t.Fatalf("reused id: advice %+v", adv)
	}
}

func TestBeginIgnoresRoutesWithoutSpeculation(t *testing.T) {
	h := newHarness(t, Config{})
	h.Begin(1, Route{Endpoint: "e", Model: "m", MatchedConfirmed: 10, BlockSize: 16})
	if n := h.tracked(); n != 0 {
		t.Fatalf("%d tracked", n)
	}
}

func TestSeriesAreBounded(t *testing.T) {
	h := newHarness(t, Config{}, func(o *Options) { o.Limits.MaxSeries = 2 })
	for _, ep := range []string{"a", "b", "c", "d"} {
		h.confirm(1, ep, "m", time.Millisecond, index.Confirmed)
	}
	h.step(h.clk.Now())
	fams, err := h.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "endpoint" {
					seen[l.GetValue()] = true
				}
			}
		}
	}
	for ep := range seen {
		switch ep {
		case "a", "b", labelOther, labelAll:
		default:
			t.Errorf("endpoint label %q beyond MaxSeries", ep)
		}
	}
	if !seen[labelOther] {
		t.Error("spilled pairs not reported under _other")
	}
}
