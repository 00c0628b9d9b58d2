package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	tests := []struct {
		name string
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{name: "empty", in: nil, p: 0.5, want: 0},
		{name: "one", in: ms(7), p: 0.99, want: 7 * time.Millisecond},
		{name: "median of four", in: ms(1, 2, 3, 4), p: 0.5, want: 2 * time.Millisecond},
		{name: "p99 of hundred", in: ms(seqInts(100)...), p: 0.99, want: 99 * time.Millisecond},
		{name: "p0", in: ms(1, 2), p: 0, want: time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.in, tt.p); got != tt.want {
				t.Errorf("percentile = %s, want %s", got, tt.want)
			}
		})
	}
}

func seqInts(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

func TestSummarize(t *testing.T) {
	tl := &tally{}
	tl.add(outcome{TTFT: 10 * time.Millisecond, Prompt: 100, Cached: 80}, nil)
	tl.add(outcome{TTFT: 30 * time.Millisecond, Prompt: 100, Cached: 0}, nil)
	tl.add(outcome{}, fmt.Errorf("boom"))
	r := summarize("fast", "load", tl, time.Second)
	if r.Requests != 3 || r.Failed != 1 || r.PromptTokens != 200 || r.CachedTokens != 80 || r.UncachedTokens != 120 {
		t.Errorf("counts: %+v", r)
	}
	if r.HitRate != 0.4 || r.TTFTp50 != 10 || r.TTFTp99 != 30 {
		t.Errorf("rates: hit %v p50 %v p99 %v", r.HitRate, r.TTFTp50, r.TTFTp99)
	}
}

func TestCheckGoals(t *testing.T) {
	row := func(sc, p string, hit, falseWarm float64) result {
		return result{Scenario: sc, Policy: p, HitRate: hit, Requests: 100, FalseWarm: falseWarm, FalseWarmShare: falseWarm / 100}
	}
	tests := []struct {
		name string
		rows []result
		want map[string]bool
	}{
		{name: "no rows", want: map[string]bool{}},
		{name: "all met", rows: []result{row("fast", policyStatic, .7, 0), row("fast", policyAdaptive, .75, 0),
			row("fast", policyOracle, .76, 0), row("cut", policyAdaptive, .5, 1)},
			want: map[string]bool{"adaptive hit rate >= static 2s in fast": true,
				"adaptive within 2% of the oracle with healthy (fast) events": true,
				"adaptive false warm routes <= 1% of routed requests in cut":  true}},
		{name: "all missed", rows: []result{row("slow", policyStatic, .7, 0), row("slow", policyAdaptive, .6, 0),
			row("fast", policyAdaptive, .6, 0), row("fast", policyOracle, .8, 0), row("cut", policyAdaptive, .5, 2)},
			want: map[string]bool{"adaptive hit rate >= static 2s in slow": false,
				"adaptive within 2% of the oracle with healthy (fast) events": false,
				"adaptive false warm routes <= 1% of routed requests in cut":  false}},
		{name: "agents", rows: []result{row("agents", policyLoad, .7, 0), row("agents", policyStatic, .8, 0),
			row("agents", policyAdaptive, .7, 0)},
			want: map[string]bool{"adaptive hit rate >= static 2s in agents": false,
				"static-2s hit rate > load-only on the agent workload over /v1/messages": true,
				"adaptive hit rate > load-only on the agent workload over /v1/messages":  false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]bool{}
			for _, g := range checkGoals(tt.rows) {
				got[g.Claim] = g.Met
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("goals = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestWriteTableAndJSON(t *testing.T) {
	stale := 3.0
	rows := []result{
		{Scenario: "cut", Policy: policyStatic, TTL: "static 2s", Requests: 10, HitRate: .5, Injected: 1, StaleExpiry: &stale, Note: "n"},
		{Scenario: "cut", Policy: policyLoad, TTL: "-", Requests: 10},
	}
	var b bytes.Buffer
	writeTable(&b, rows)
	out := b.String()
	for _, want := range []string{"| scenario | policy |", "| cut | static-2s | static 2s | 10 | 50.0% | 0 | 1 |", "| 3 |", "| - |", "- cut/static-2s: n"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	if err := writeJSON(&b, config{Requests: 10}, rows, checkGoals(rows)); err != nil {
		t.Fatal(err)
	}
	var back struct{ Results []result }
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back.Results) != 2 || *back.Results[0].StaleExpiry != 3 {
		t.Errorf("json round trip: %v %+v", err, back)
	}
}

func Example_writeTable() {
	stale := 12.0
	writeTable(os.Stdout, []result{{Scenario: "slow", Policy: policyAdaptive, TTL: "adaptive 1.4s", Requests: 240,
		HitRate: .8125, UncachedTokens: 9000, Injected: 5, SpeculativeRoutes: 40, FalseWarm: 1, FalseWarmShare: 1.0 / 245,
		StaleExpiry: &stale, TTFTp50: 31, TTFTp99: 120}})
	// Output:
	// | scenario | policy | TTL at end | requests | hit rate | uncached prefill tokens | injected prefill failures | speculative routes | false warm routes | stale expiries (blocks) | TTFT p50 | TTFT p99 |
	// |---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|
	// | slow | adaptive | adaptive 1.4s | 240 | 81.2% | 9000 | 5 | 40 | 1 (0.4%) | 12 | 31 ms | 120 ms |
}
