package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/extproc"
	"github.com/warmroute/warmroute/internal/testwait"
)

const decisionsMetric = "warmroute_scorer_decisions_total"

// sweepResult is the part of `warmroute ttl validate --json` checked here,
// decoded as any user's script would.
type sweepResult struct {
	BlockSize     int            `json:"blockSize"`
	BlockSizeFrom string         `json:"blockSizeFrom"`
	Gaps          []any          `json:"gaps"`
	Decisions     map[string]int `json:"decisions"`
	Stopped       string         `json:"stopped"`
	Pairs         []struct {
		Gap           string   `json:"gap"`
		Index         int      `json:"index"`
		First, Second exchange `json:"-"`
		FirstRaw      exchange `json:"first"`
		SecondRaw     exchange `json:"second"`
		SameEndpoint  bool     `json:"sameEndpoint"`
		Uncached      *int     `json:"uncachedPrefillTokens"`
		Verdict       string   `json:"verdict"`
	} `json:"pairs"`
}

type exchange struct {
	Decision struct {
		Basis    string `json:"basis"`
		Endpoint string `json:"endpoint"`
	} `json:"decision"`
}

func indexed(basis string) bool { return basis == "confirmed" || basis == "speculative" }

// badVerdicts are the tool's routing mistakes.
var badVerdicts = []string{"false warm route", "failed request looks confirmed"}

// tokenizerForTest returns a real tokenizer directory, shared by router and
// simulators so their token ids (and so block keys) agree, or skips: prefix
// routing is off without one.
func tokenizerForTest(t *testing.T) string {
	t.Helper()
	root, err := harness.ModuleRoot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, ".cache", "tokenizers", "qwen3")
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err != nil {
		t.Skipf("skipping: no tokenizer at %s (make tokenizers): %v", dir, err)
	}
	return dir
}

// eventStack starts a stack whose simulators use tok, report cached tokens
// and publish KV events, with one relay per simulator forwarding them to
// the router's embedded NATS, so predictions can be confirmed.
func eventStack(t *testing.T, tok string, sims int) *harness.Stack {
	t.Helper()
	ports, err := harness.FreePorts(sims)
	if err != nil {
		t.Fatal(err)
	}
	// The sweep reads each decision from its response: opt in to the copy.
	opts := harness.Options{RouterArgs: []string{"--tokenizer", harness.DefaultModel + "=" + tok},
		DecisionHeader: extproc.DecisionHeaderClient}
	for i := range sims {
		args := append(slices.Clone(simArgs), "--prompt-tokens-details", "--tokenizer", tok,
			"--kv-events-url", "tcp://"+harness.Addr(ports[i]))
		opts.Sims = append(opts.Sims, harness.SimOptions{Args: args})
	}
	st := newStack(t, opts)
	bin, _ := buildBin() // newStack already built it
	for i, s := range st.Sims {
		p, err := harness.Start("relay-"+s.ID, t.TempDir(), bin, "relay", "--zmq-url", "tcp://"+harness.Addr(ports[i]),
			"--model", harness.DefaultModel, "--endpoint-addr", s.Addr, "--nats-url", "nats://"+st.Router.NATSAddr, "--admin-addr", "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("--- %s ---\n%s", p.Name(), p.Tail(40))
			}
			if err := p.Stop(); err != nil {
				t.Errorf("stopping %s: %v", p.Name(), err)
			}
		})
	}
	waitHeard(t, st)
	return st
}

// waitHeard waits until the router has a heartbeat from every simulator's
// relay: until then its freshness guard rightly pauses speculation for the
// endpoint ("unknown"), which would show as predictions missing.
func waitHeard(t *testing.T, st *harness.Stack) {
	t.Helper()
	const heartbeatAge = "warmroute_events_source_heartbeat_age_seconds"
	testwait.Until(t, 30*time.Second, func() string {
		m := scrape(t, st)
		heard := 0
		for _, s := range st.Sims {
			if hasSeries(m, heartbeatAge, s.Addr) {
				heard++
			}
		}
		if heard < len(st.Sims) {
			return fmt.Sprintf("router heard heartbeats from %d of %d relays", heard, len(st.Sims))
		}
		return ""
	})
}

func hasSeries(m harness.Metrics, name, endpoint string) bool {
	for _, s := range m[name].GetMetric() {
		for _, l := range s.GetLabel() {
			if l.GetName() == "endpoint" && l.GetValue() == endpoint {
				return true
			}
		}
	}
	return false
}

// TestTTLValidateSuccess runs `warmroute ttl validate` against real Envoy,
// router, simulators and relays, and checks that the bases it reports are
// the ones the router counted, that no pair was a false warm route, and
// that every second request that rested on the index hit the cache.
func TestTTLValidateSuccess(t *testing.T) {
	tok := tokenizerForTest(t)
	st := eventStack(t, tok, 2)
	before := scrape(t, st)
	res := runValidate(t, st)
	checkDecisionsMatchMetrics(t, st, before, res)
	checkSuccessVerdicts(t, res)
}

func checkDecisionsMatchMetrics(t *testing.T, st *harness.Stack, before harness.Metrics, res *sweepResult) {
	t.Helper()
	after := scrape(t, st)
	for _, basis := range []string{"confirmed", "speculative", "none"} {
		m := map[string]string{"basis": basis}
		got := after.Sum(decisionsMetric, m) - before.Sum(decisionsMetric, m)
		if want := float64(res.Decisions[basis]); got != want {
			t.Errorf("%s{basis=%s} grew by %v, tool reported %v", decisionsMetric, basis, got, want)
		}
	}
}

func checkSuccessVerdicts(t *testing.T, res *sweepResult) {
	t.Helper()
	if res.BlockSize != 16 || res.BlockSizeFrom != "router" {
		t.Errorf("block size %d from %q, want 16 from the router", res.BlockSize, res.BlockSizeFrom)
	}
	if want := 2 * len(res.Gaps); len(res.Pairs) != want || res.Stopped != "" {
		t.Fatalf("%d pairs (stopped %q), want %d", len(res.Pairs), res.Stopped, want)
	}
	for _, p := range res.Pairs {
		p.First, p.Second = p.FirstRaw, p.SecondRaw
		if indexed(p.First.Decision.Basis) {
			t.Errorf("gap %s pair %d: first request rested on %s; fresh prefixes must not match", p.Gap, p.Index, p.First.Decision.Basis)
		}
		if slices.Contains(badVerdicts, p.Verdict) || !indexed(p.Second.Decision.Basis) {
			t.Errorf("gap %s pair %d: verdict %q, basis %s", p.Gap, p.Index, p.Verdict, p.Second.Decision.Basis)
		}
		if indexed(p.Second.Decision.Basis) && (!p.SameEndpoint || p.Uncached == nil) {
			t.Errorf("gap %s pair %d: indexed route to %s after %s, uncached %v", p.Gap, p.Index,
				p.Second.Decision.Endpoint, p.First.Decision.Endpoint, p.Uncached)
		}
	}
	last := res.Pairs[len(res.Pairs)-1]
	if last.Gap != "beyond TTL" || last.SecondRaw.Decision.Basis != "confirmed" {
		t.Errorf("last pair: gap %q basis %s, want beyond TTL resting on a confirmed event", last.Gap, last.SecondRaw.Decision.Basis)
	}
}

// TestTTLValidateFailPrefill makes every first request fail its prefill on
// the simulator (no block stored, no event): the second request must never
// look confirmed, and beyond the TTL the failed prediction must be gone.
func TestTTLValidateFailPrefill(t *testing.T) {
	tok := tokenizerForTest(t)
	st := eventStack(t, tok, 2)
	before := scrape(t, st)
	res := runValidate(t, st, "--gaps", "100ms,2.5s", "--first-request-fault", "fail-prefill")
	checkDecisionsMatchMetrics(t, st, before, res)
	if len(res.Pairs) != 4 {
		t.Fatalf("%d pairs, want 4", len(res.Pairs))
	}
	for _, p := range res.Pairs {
		if p.SecondRaw.Decision.Basis == "confirmed" || p.Verdict == "failed request looks confirmed" {
			t.Errorf("gap %s pair %d: a failed first request looks confirmed (%s)", p.Gap, p.Index, p.Verdict)
		}
	}
	for _, p := range res.Pairs[2:] {
		if indexed(p.SecondRaw.Decision.Basis) {
			t.Errorf("2.5s after a failed prefill (TTL 2s) the second request still rested on %s", p.SecondRaw.Decision.Basis)
		}
	}
}

// runValidate runs `warmroute ttl validate --json` against st with two
// pairs per gap plus args, and decodes its result.
func runValidate(t *testing.T, st *harness.Stack, args ...string) *sweepResult {
	t.Helper()
	bin, _ := buildBin()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args = append([]string{"ttl", "validate", "--target-url", st.URL(""), "--debug-url", "http://" + st.Router.DebugAddr,
		"--model", harness.DefaultModel, "--pairs", "2", "--prefix-words", "200", "--json"}, args...)
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ttl validate: %v\n%s\n%s", err, stderr.String(), stdout.String())
	}
	var res sweepResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("decoding result: %v\n%s", err, stdout.String())
	}
	t.Logf("result:\n%s", stdout.String())
	return &res
}
