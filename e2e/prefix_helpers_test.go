package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/e2e/harness"
)

var buildNATSD = sync.OnceValues(func() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	root, err := harness.ModuleRoot(ctx)
	if err != nil {
		return "", err
	}
	return harness.BuildNATSD(ctx, root, binDir)
})

// prefixSimArgs make simulators answer fast and report cached tokens.
var prefixSimArgs = []string{"--prefill-per-token", "0s", "--ttft", "1ms", "--decode-per-token", "1ms",
	"--prompt-tokens-details"}

// newPrefixStack starts a prefix-routing stack with the real Qwen3
// tokenizer, stops it when t ends, and prints the logs if t failed.
func newPrefixStack(t *testing.T, o harness.PrefixOptions) *harness.PrefixStack {
	t.Helper()
	o.Envoy = harness.EnvoyForTest(t)
	o.Tokenizer = harness.Qwen3ForTest(t)
	bin, err := buildBin()
	if err != nil {
		t.Fatal(err)
	}
	o.Binary, o.Dir = bin, t.TempDir()
	o.SimArgs = append(slices.Clone(prefixSimArgs), o.SimArgs...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ps, err := harness.StartPrefixStack(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	stopAtCleanup(t, "prefix stack", ps)
	return ps
}

// stopAtCleanup stops a stack when the test ends, showing the tail of its
// processes' logs first when the test failed.
func stopAtCleanup(t *testing.T, name string, st interface {
	Logs(lines int) string
	Close() error
}) {
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(st.Logs(40))
		}
		if err := st.Close(); err != nil {
			t.Errorf("stopping %s: %v", name, err)
		}
	})
}

// words returns n distinct-looking words seeded by tag, so prompts with
// different tags share no leading block and prompts with the same tag share
// all of these words.
func words(tag string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%s%d river stone ", tag, i)
	}
	return b.String()
}

// decision is the parsed x-warmroute-decision header.
type decision struct {
	basis                  string
	confirmed, spec, total int
	raw                    string
}

var matchedRE = regexp.MustCompile(`matched=(\d+)c\+(\d+)s/(\d+)`)

func parseDecision(h string) decision {
	d := decision{raw: h}
	for part := range strings.SplitSeq(h, ";") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(part), "basis="); ok {
			d.basis = v
		}
	}
	if m := matchedRE.FindStringSubmatch(h); m != nil {
		d.confirmed, _ = strconv.Atoi(m[1])
		d.spec, _ = strconv.Atoi(m[2])
		d.total, _ = strconv.Atoi(m[3])
	}
	return d
}

// routed is one request sent through Envoy and what became of it.
type routed struct {
	simID    string
	decision decision
	prompt   int // usage.prompt_tokens
	cached   int // usage.prompt_tokens_details.cached_tokens
}

// complete sends a non-streaming completion through Envoy and checks it
// succeeded with usage.
func complete(t *testing.T, ps *harness.PrefixStack, prompt string, header map[string]string) routed {
	t.Helper()
	r, _ := completeHeader(t, ps, prompt, header)
	return r
}

// completeHeader is complete, also returning the response's headers.
func completeHeader(t *testing.T, ps *harness.PrefixStack, prompt string, header map[string]string) (routed, http.Header) {
	t.Helper()
	r, err := do(context.Background(), http.MethodPost, ps.URL("/v1/completions"),
		mustJSON(t, completionRequest(prompt, false)), header)
	if err != nil {
		t.Fatal(err)
	}
	if r.status != http.StatusOK {
		t.Fatalf("completion: %v", r)
	}
	promptTokens, cached := clientUsage(t, r.body, false)
	return routed{simID: servedBy(t, ps.Stack, r), decision: parseDecision(r.header.Get("x-warmroute-decision")),
		prompt: promptTokens, cached: cached}, r.header
}

// simByID returns the event simulator with id.
func simByID(t *testing.T, ps *harness.PrefixStack, id string) *harness.EventSim {
	t.Helper()
	for _, s := range ps.EventSims {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no simulator %q", id)
	return nil
}

// tokenize asks a simulator for the prompt's token ids (the same ids the
// router computes with the same tokenizer).
func tokenize(t *testing.T, s *harness.EventSim, prompt string) []uint32 {
	t.Helper()
	r := mustDo(t, http.MethodPost, "http://"+s.Addr+"/tokenize", mustJSON(t, map[string]any{"prompt": prompt}), nil)
	var out struct {
		Tokens []uint32 `json:"tokens"`
	}
	if r.status != http.StatusOK || json.Unmarshal(r.body, &out) != nil {
		t.Fatalf("tokenize: %v", r)
	}
	return out.Tokens
}

// lookupOn returns the router's view of tokens on endpoint.
func lookupOn(t *testing.T, ps *harness.PrefixStack, tokens []uint32, endpoint string) api.EndpointIndexLookup {
	t.Helper()
	res, err := ps.Router.IndexLookup(context.Background(), api.IndexLookupRequest{Model: ps.Model, Tokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Endpoints {
		if e.Endpoint == endpoint {
			return e
		}
	}
	return api.EndpointIndexLookup{Endpoint: endpoint}
}
