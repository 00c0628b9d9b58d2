package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/index/ttl"
)

// result is one scenario x policy row.
type result struct {
	Scenario string `json:"scenario"`
	Policy   string `json:"policy"`
	// TTL describes the speculative TTL in force at the end of the run.
	TTL      string `json:"ttl"`
	Requests int    `json:"requests"`
	Failed   int    `json:"failed"`
	// Injected counts first attempts failed on purpose (then retried); they
	// are not in Requests.
	Injected int `json:"injectedFailures"`
	// PromptTokens and CachedTokens add up the simulators' usage.
	PromptTokens   int64   `json:"promptTokens"`
	CachedTokens   int64   `json:"cachedTokens"`
	HitRate        float64 `json:"hitRate"`
	UncachedTokens int64   `json:"uncachedPrefillTokens"`
	// SpeculativeRoutes used a prediction; FalseWarm of them missed
	// (warmroute_ttl_speculative_routes_total{result="miss"}).
	SpeculativeRoutes float64 `json:"speculativeRoutes"`
	FalseWarm         float64 `json:"falseWarmRoutes"`
	FalseWarmShare    float64 `json:"falseWarmShare"` // of routed requests
	// StaleExpiry counts predicted blocks that expired unconfirmed; nil
	// where it means nothing (no router, or the confirmed-only policy).
	StaleExpiry *float64 `json:"staleExpiryBlocks"`
	// Decisions counts the router's decisions by basis.
	Decisions map[string]float64 `json:"decisions,omitempty"`
	// Events describes the event pipeline as the router saw it.
	Events   map[string]float64 `json:"events,omitempty"`
	TTFTp50  float64            `json:"ttftP50Ms"`
	TTFTp99  float64            `json:"ttftP99Ms"`
	ElapsedS float64            `json:"elapsedSeconds"`
	Note     string             `json:"note,omitempty"`

	report ttl.Report
}

// summarize computes the client-side columns from t.
func summarize(scenario, policy string, t *tally, elapsed time.Duration) result {
	r := result{Scenario: scenario, Policy: policy, TTL: "-", Requests: len(t.outcomes) + len(t.failures),
		Failed: len(t.failures), Injected: t.injected, ElapsedS: elapsed.Seconds()}
	ttft := make([]time.Duration, 0, len(t.outcomes))
	for _, o := range t.outcomes {
		r.PromptTokens += int64(o.Prompt)
		r.CachedTokens += int64(o.Cached)
		ttft = append(ttft, o.TTFT)
	}
	r.UncachedTokens = r.PromptTokens - r.CachedTokens
	if r.PromptTokens > 0 {
		r.HitRate = float64(r.CachedTokens) / float64(r.PromptTokens)
	}
	slices.Sort(ttft)
	r.TTFTp50, r.TTFTp99 = millis(percentile(ttft, 0.50)), millis(percentile(ttft, 0.99))
	return r
}

// percentile is the nearest-rank percentile of sorted; 0 when empty.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// fromRouter fills the router's columns from one scrape and TTL report.
func (r *result) fromRouter(m harness.Metrics, rep ttl.Report, plan routerPlan) {
	r.report = rep
	// The TTL counters exist per (endpoint, model) only; summing every
	// series is the router's total.
	r.SpeculativeRoutes = m.Sum("warmroute_ttl_speculative_routes_total", nil)
	r.FalseWarm = m.Sum("warmroute_ttl_speculative_routes_total", map[string]string{"result": "miss"})
	if r.Requests > 0 {
		r.FalseWarmShare = r.FalseWarm / float64(r.Requests+r.Injected)
	}
	r.Decisions = map[string]float64{}
	for _, b := range []string{"confirmed", "speculative", "none"} {
		r.Decisions[b] = m.Sum("warmroute_scorer_decisions_total", map[string]string{"basis": b})
	}
	r.Events = map[string]float64{
		"blocksStored":  m.Sum("warmroute_events_subscriber_blocks_total", map[string]string{"kind": "stored"}),
		"messages":      m.Sum("warmroute_events_subscriber_messages_total", map[string]string{"result": "applied"}),
		"gaps":          m.Sum("warmroute_events_subscriber_gaps_total", nil),
		"resets":        m.Sum("warmroute_events_subscriber_resets_total", nil),
		"confirmations": m.Sum("warmroute_ttl_endings_total", map[string]string{"ending": "confirmed"}),
		"earlyExpiry":   m.Sum("warmroute_ttl_endings_total", map[string]string{"ending": "early_expiry"}),
	}
	if !plan.Prefix {
		return
	}
	r.TTL = describeTTL(rep)
	if plan.TTL.Static.D() != noSpeculation {
		stale := m.Sum("warmroute_ttl_endings_total", map[string]string{"ending": "stale_expiry"})
		r.StaleExpiry = &stale
	} else {
		r.TTL = "off (1ns)"
	}
}

// describeTTL names the TTL in force: one value, or the range of the
// per-endpoint adaptive TTLs.
func describeTTL(rep ttl.Report) string {
	lo, hi := rep.Overall.Current.D(), rep.Overall.Current.D()
	for _, row := range rep.Rows {
		lo, hi = min(lo, row.Current.D()), max(hi, row.Current.D())
	}
	if lo == hi {
		return string(rep.Mode) + " " + lo.String()
	}
	return fmt.Sprintf("%s %s-%s", rep.Mode, lo, hi)
}

// writeTable prints the results as a markdown table.
func writeTable(w io.Writer, rows []result) {
	fmt.Fprintln(w, "| scenario | policy | TTL at end | requests | hit rate | uncached prefill tokens | injected prefill failures | speculative routes | false warm routes | stale expiries (blocks) | TTFT p50 | TTFT p99 |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		stale := "-"
		if r.StaleExpiry != nil {
			stale = fmt.Sprintf("%.0f", *r.StaleExpiry)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %d | %.1f%% | %d | %d | %.0f | %.0f (%.1f%%) | %s | %.0f ms | %.0f ms |\n",
			r.Scenario, r.Policy, r.TTL, r.Requests, 100*r.HitRate, r.UncachedTokens, r.Injected, r.SpeculativeRoutes,
			r.FalseWarm, 100*r.FalseWarmShare, stale, r.TTFTp50, r.TTFTp99)
	}
	var notes []string
	for _, r := range rows {
		if r.Note != "" {
			notes = append(notes, fmt.Sprintf("- %s/%s: %s", r.Scenario, r.Policy, r.Note))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, strings.Join(notes, "\n"))
	}
}

// writeJSON writes the results and the goal checks as indented JSON.
func writeJSON(w io.Writer, meta any, rows []result, goals []goal) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(map[string]any{"config": meta, "results": rows, "goals": goals}); err != nil {
		return fmt.Errorf("encoding json report: %w", err)
	}
	return nil
}
