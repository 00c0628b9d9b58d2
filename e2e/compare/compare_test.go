package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warmroute/warmroute/e2e/harness"
)

// TestQuickCompare runs -quick end to end on the fast scenario and on the
// agent workload over /v1/messages, each with load-only and static-TTL
// prefix routing: real simulators, relays, router and Envoy. It checks the
// table is produced with sane values, and that routing on prefixes beats
// routing on load on both multi-turn workloads.
func TestQuickCompare(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	harness.EnvoyForTest(t)
	jsonPath := filepath.Join(t.TempDir(), "out.json")
	var stdout bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	err := run(ctx, []string{"-quick", "-scenarios", "fast,agents", "-policies", "load,static-2s", "-json", jsonPath}, &stdout, io.Discard)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stdout.String())
	}
	for _, row := range []string{"| fast | load |", "| fast | static-2s |", "| agents | load |", "| agents | static-2s |"} {
		if !strings.Contains(stdout.String(), row) {
			t.Fatalf("table lacks row %q:\n%s", row, stdout.String())
		}
	}
	rows := readResults(t, jsonPath)
	if len(rows) != 4 {
		t.Fatalf("got %d rows, want 4", len(rows))
	}
	for _, r := range rows {
		checkSane(t, r)
	}
	for i := 0; i < len(rows); i += 2 {
		load, prefix := rows[i], rows[i+1]
		if prefix.HitRate <= load.HitRate {
			t.Errorf("%s: prefix hit rate %.3f not above load-only %.3f\n%s", prefix.Scenario, prefix.HitRate, load.HitRate, stdout.String())
		}
		if prefix.Decisions["confirmed"] == 0 {
			t.Errorf("%s: prefix policy made no confirmed decision: %v", prefix.Scenario, prefix.Decisions)
		}
	}
}

func readResults(t *testing.T, path string) []result {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Results []result }
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out.Results
}

func checkSane(t *testing.T, r result) {
	t.Helper()
	if r.Requests != 36 || r.Failed != 0 {
		t.Errorf("%s/%s: %d requests, %d failed; want 36, 0", r.Scenario, r.Policy, r.Requests, r.Failed)
	}
	if r.HitRate <= 0 || r.HitRate >= 1 || r.PromptTokens <= 0 || r.UncachedTokens <= 0 {
		t.Errorf("%s: hit rate %.3f of %d prompt tokens, %d uncached", r.Policy, r.HitRate, r.PromptTokens, r.UncachedTokens)
	}
	if r.TTFTp50 <= 0 || r.TTFTp99 < r.TTFTp50 {
		t.Errorf("%s: TTFT p50 %.1f ms, p99 %.1f ms", r.Policy, r.TTFTp50, r.TTFTp99)
	}
	if r.FalseWarm > r.SpeculativeRoutes {
		t.Errorf("%s: %v false warm routes of %v speculative", r.Policy, r.FalseWarm, r.SpeculativeRoutes)
	}
}
