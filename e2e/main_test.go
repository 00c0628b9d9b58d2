package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warmroute/warmroute/e2e/envoy"
	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/internal/testwait"
)

// model is the model every simulator serves.
const model = harness.DefaultModel

// simArgs keep simulators fast and able to take the 2 MB prompt: no prefill
// cost, and a context window far above what the tests send.
var simArgs = []string{"--prefill-per-token", "0s", "--max-model-len", "10000000"}

// modes are the ext_proc request body modes every routing test runs under.
var modes = []envoy.Template{envoy.Buffered, envoy.FullDuplex}

var (
	binDir   string
	buildBin = sync.OnceValues(func() (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		root, err := harness.ModuleRoot(ctx)
		if err != nil {
			return "", err
		}
		return harness.Warmroute(ctx, root, binDir)
	})
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "warmroute-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// newStack starts a stack for t with the tests' defaults, stops it when t
// ends, and prints every process's log tail first if t failed.
func newStack(t *testing.T, o harness.Options) *harness.Stack {
	t.Helper()
	o.Envoy = harness.EnvoyForTest(t)
	bin, err := buildBin()
	if err != nil {
		t.Fatal(err)
	}
	o.Binary, o.Dir = bin, t.TempDir()
	o.AccessLog, o.SubsetHintHeader = true, true
	if o.Sims == nil {
		o.Sims = make([]harness.SimOptions, 3)
		for i := range o.Sims {
			o.Sims[i].Args = simArgs
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := harness.StartStack(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(st.Logs(60))
		}
		if err := st.Close(); err != nil {
			t.Errorf("stopping stack: %v", err)
		}
	})
	return st
}

var client = &http.Client{
	Timeout:   60 * time.Second,
	Transport: &http.Transport{MaxIdleConnsPerHost: 64},
}

// result is one HTTP exchange, read in full.
type result struct {
	status int
	header http.Header
	body   []byte
}

func (r result) String() string {
	b := r.body
	if len(b) > 300 {
		b = append(b[:300:300], "..."...)
	}
	return fmt.Sprintf("%d %q", r.status, b)
}

func do(ctx context.Context, method, url string, body []byte, header map[string]string) (result, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return result{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return result{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return result{status: resp.StatusCode, header: resp.Header, body: b}, err
}

func mustDo(t *testing.T, method, url string, body []byte, header map[string]string) result {
	t.Helper()
	r, err := do(context.Background(), method, url, body, header)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return r
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func completionRequest(prompt string, stream bool) map[string]any {
	return map[string]any{"model": model, "prompt": prompt, "max_tokens": 8, "stream": stream}
}

func chatRequest(content string, stream bool) map[string]any {
	return map[string]any{"model": model, "max_tokens": 8, "stream": stream,
		"messages": []map[string]string{{"role": "user", "content": content}}}
}

// servedBy returns which simulator answered, failing t when the header is
// missing or names no simulator of st.
func servedBy(t *testing.T, st *harness.Stack, r result) string {
	t.Helper()
	id := r.header.Get("x-warmroute-served-by")
	ids := make([]string, len(st.Sims))
	for i, s := range st.Sims {
		ids[i] = s.ID
	}
	if !slices.Contains(ids, id) {
		t.Fatalf("x-warmroute-served-by = %q, want one of %v (response %v)", id, ids, r)
	}
	return id
}

// waitMetric polls the router's metrics until the sum of name is want, and
// fails t when timeout passes first; when says when the value is due.
func waitMetric(t *testing.T, st *harness.Stack, name string, want float64, timeout time.Duration, when string) {
	t.Helper()
	testwait.Until(t, timeout, func() string {
		if v := scrape(t, st).Sum(name, nil); v != want {
			return fmt.Sprintf("%s = %v %s, want %v", name, v, when, want)
		}
		return ""
	})
}

func scrape(t *testing.T, st *harness.Stack) harness.Metrics {
	t.Helper()
	m, err := harness.Scrape(context.Background(), st.Router.MetricsURL())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func modeName(m envoy.Template) string { return strings.TrimSuffix(string(m), ".yaml.tmpl") }
