package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/warmroute/warmroute/e2e/harness"
)

// vllmTTLPairs is the pairs per gap of the sweep against the real engine.
const vllmTTLPairs = 3

// validateTTLOnVLLM runs `warmroute ttl validate` through st against the
// real vLLM TestRealVLLM started: gaps planned from the router's own TTL
// report (below p50, near p95, near the TTL, beyond it), prompts of a few
// hundred tokens. It runs the sweep twice, as a table for people (logged)
// and as JSON, and checks the JSON: every pair answered with a decision,
// no routing mistake, every second request resting on the index (beyond
// the TTL on a confirmed event), and every confirmed route one the engine
// served warm.
func validateTTLOnVLLM(t *testing.T, st *harness.Stack, served string) {
	t.Helper()
	table := runVLLMValidate(t, st, served, false)
	t.Logf("warmroute ttl validate against vLLM:\n%s", table)
	var res sweepResult
	if err := json.Unmarshal(runVLLMValidate(t, st, served, true), &res); err != nil {
		t.Fatalf("decoding the sweep: %v", err)
	}
	if res.BlockSize != vllmBlockSize || res.BlockSizeFrom != "router" {
		t.Errorf("block size %d from %q, want %d from the router", res.BlockSize, res.BlockSizeFrom, vllmBlockSize)
	}
	if want := vllmTTLPairs * len(res.Gaps); len(res.Pairs) != want || res.Stopped != "" {
		t.Fatalf("%d pairs (stopped %q), want %d", len(res.Pairs), res.Stopped, want)
	}
	for _, p := range res.Pairs {
		first, second := p.FirstRaw.Decision, p.SecondRaw.Decision
		if indexed(first.Basis) {
			t.Errorf("gap %s pair %d: first request rested on %s; fresh prefixes must not match", p.Gap, p.Index, first.Basis)
		}
		if slices.Contains(badVerdicts, p.Verdict) {
			t.Errorf("gap %s pair %d: %s", p.Gap, p.Index, p.Verdict)
		}
		// Beyond the TTL the prediction is gone, but the first request's
		// blocks were confirmed long before: every second request rests on
		// the index.
		if !indexed(second.Basis) {
			t.Errorf("gap %s pair %d: second request rested on %s", p.Gap, p.Index, second.Basis)
		}
		if second.Basis == "confirmed" && p.Verdict != "routed on confirmation and hit" {
			t.Errorf("gap %s pair %d: confirmed route, but %s (uncached %v)", p.Gap, p.Index, p.Verdict, p.Uncached)
		}
	}
}

// runVLLMValidate runs the sweep once and returns its output.
func runVLLMValidate(t *testing.T, st *harness.Stack, served string, asJSON bool) []byte {
	t.Helper()
	bin, err := buildBin()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	args := []string{"ttl", "validate", "--target-url", st.Envoy.URL(""), "--debug-url", "http://" + st.Router.DebugAddr,
		"--model", served, "--pairs", strconv.Itoa(vllmTTLPairs), "--prefix-words", "200"}
	if asJSON {
		args = append(args, "--json")
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ttl validate: %v\n%s\n%s", err, stderr.String(), stdout.String())
	}
	return stdout.Bytes()
}
