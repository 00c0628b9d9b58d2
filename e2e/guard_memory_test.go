package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/internal/testwait"
)

// Slow bodies: the router's body budget in these tests, and the heap the
// router may use above it (its index, tokenizer, gRPC streams and garbage
// not yet collected).
const (
	slowBudget    = 8 << 20
	slowHeapSlack = 32 << 20
	slowConns     = 500
)

// slowClient is one connection that announced a large body and trickles it.
type slowClient struct {
	conn net.Conn
	resp chan *http.Response // the router's early answer, if any
}

func dialSlow(addr string) (*slowClient, error) {
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	head := "POST /v1/completions HTTP/1.1\r\nHost: e2e\r\nContent-Type: application/json\r\n" +
		"Content-Length: 8000000\r\n\r\n{"
	if _, err := conn.Write([]byte(head)); err != nil {
		conn.Close()
		return nil, err
	}
	c := &slowClient{conn: conn, resp: make(chan *http.Response, 1)}
	go func() { // ends when the connection is closed
		if r, err := http.ReadResponse(bufio.NewReader(conn), nil); err == nil {
			c.resp <- r
		}
	}()
	return c, nil
}

// openSlow opens n slow clients, a few at a time so a loaded machine's
// accept queue keeps up.
func openSlow(t *testing.T, addr string, n int) []*slowClient {
	t.Helper()
	clients := make([]*slowClient, n)
	errs := make(chan error, n)
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			c, err := dialSlow(addr)
			if err != nil {
				errs <- err
				return
			}
			clients[i] = c
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("opening a slow connection: %v", err)
	}
	t.Cleanup(func() { closeSlow(clients) })
	return clients
}

func closeSlow(clients []*slowClient) {
	for _, c := range clients {
		if c != nil {
			c.conn.Close()
		}
	}
}

func heapInuse(t *testing.T, st *harness.Stack) float64 {
	t.Helper()
	v, ok := scrape(t, st).Value("go_memstats_heap_inuse_bytes", nil)
	if !ok {
		t.Fatal("the router exports no go_memstats_heap_inuse_bytes")
	}
	return v
}

// TestSlowBodiesStayWithinTheBudget opens 500 connections through Envoy
// that announce 8 MB bodies and send one byte: the router's heap stays
// below its body budget plus a constant, the connections beyond the budget
// get a 503 in the OpenAI error shape at once, and once they are gone a
// good request is served.
func TestSlowBodiesStayWithinTheBudget(t *testing.T) {
	st := newStack(t, harness.Options{RouterArgs: []string{"--max-buffered-bytes", strconv.Itoa(slowBudget)}})
	if r := mustDo(t, http.MethodPost, st.URL("/v1/completions"), mustJSON(t, completionRequest("warm up", false)), nil); r.status != 200 {
		t.Fatalf("warm-up request: %v", r)
	}
	before := heapInuse(t, st)
	clients := openSlow(t, st.Envoy.ListenAddr, slowConns)
	// Every stream either holds its first chunk or was refused.
	testwait.Until(t, 30*time.Second, func() string {
		m := scrape(t, st)
		held := m.Sum("warmroute_extproc_streams_active", nil)
		refused := m.Sum("warmroute_extproc_requests_total", map[string]string{"outcome": "overloaded"})
		if held+refused < slowConns {
			return fmt.Sprintf("%v streams held and %v refused, want %d in all", held, refused, slowConns)
		}
		return ""
	})
	// Keep trickling: the held streams grow by nothing they have not paid for.
	for _, c := range clients {
		c.conn.Write([]byte(" "))
	}
	m := scrape(t, st)
	heap, buffered := heapInuse(t, st), m.Sum("warmroute_extproc_buffered_bytes", nil)
	refused := m.Sum("warmroute_extproc_requests_total", map[string]string{"outcome": "overloaded"})
	held := m.Sum("warmroute_extproc_streams_active", nil)
	t.Logf("%d slow connections: heap in use %.1f MiB before, %.1f MiB with them; %.0f bytes of bodies buffered; %v refused",
		slowConns, before/(1<<20), heap/(1<<20), buffered, refused)
	// A message read ahead is reserved before its stream takes it over and
	// may overdraw the budget (by design, up to one gRPC message in all):
	// here each held stream can have at most its one trickled byte read
	// ahead at the moment of the scrape.
	if buffered > slowBudget+held {
		t.Errorf("buffered bytes %v exceed the budget %d plus one read-ahead byte for each of %v held streams", buffered, slowBudget, held)
	}
	if heap > slowBudget+slowHeapSlack {
		t.Errorf("heap in use %.1f MiB, want at most the budget plus %d MiB", heap/(1<<20), slowHeapSlack>>20)
	}
	if refused == 0 {
		t.Error("no connection was refused, so the budget was never reached")
	}
	checkRefused(t, clients)
	closeSlow(clients)
	testwait.Until(t, 30*time.Second, func() string {
		if b := scrape(t, st).Sum("warmroute_extproc_buffered_bytes", nil); b != 0 {
			return fmt.Sprintf("%v bytes still buffered after the clients left", b)
		}
		return ""
	})
	if r := mustDo(t, http.MethodPost, st.URL("/v1/completions"), mustJSON(t, completionRequest("after the flood", false)), nil); r.status != 200 {
		t.Fatalf("good request after the slow connections: %v", r)
	}
}

// checkRefused reads the answer of one refused connection: 503 with the
// OpenAI error body.
func checkRefused(t *testing.T, clients []*slowClient) {
	t.Helper()
	// The refusals are on their way when the metrics count them: wait for
	// the first to arrive rather than look once.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if r := firstAnswer(clients); r != nil {
			checkRefusal(t, r)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Error("no refused connection received an answer")
}

// firstAnswer is the response one of clients has received, or nil.
func firstAnswer(clients []*slowClient) *http.Response {
	for _, c := range clients {
		select {
		case r := <-c.resp:
			return r
		default:
		}
	}
	return nil
}

func checkRefusal(t *testing.T, r *http.Response) {
	t.Helper()
	defer r.Body.Close()
	var body api.ErrorResponse
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		t.Fatalf("decoding the refusal: %v", err)
	}
	if r.StatusCode != 503 || body.Error.Type != api.ErrTypeUnavailable || body.Error.Code != 503 {
		t.Errorf("refusal = %d %+v, want 503 %s", r.StatusCode, body.Error, api.ErrTypeUnavailable)
	}
	if v := r.Header.Get("Retry-After"); v != "1" {
		t.Errorf("refusal Retry-After = %q, want 1", v)
	}
}

// TestOverLongPromptIsRoutedOnLoad sends prompts beyond the pool's
// maxModelLen: the router does not key them (routed on load, counted as
// too_long, with next to no time in the tokenize stage), the engine answers
// with its own 400, and a good request is then served with its prefix.
func TestOverLongPromptIsRoutedOnLoad(t *testing.T) {
	const maxModelLen = 1024
	tok := harness.Qwen3ForTest(t)
	st := newStack(t, harness.Options{
		MaxModelLen: maxModelLen,
		RouterArgs:  []string{"--tokenizer", model + "=" + tok},
		Sims: []harness.SimOptions{
			{Args: []string{"--prefill-per-token", "0s", "--max-model-len", strconv.Itoa(maxModelLen)}},
		},
	})
	tests := []struct {
		name   string
		prompt string
	}{
		// 3 MB of one "word": refused by its size, never tokenized.
		{"3 MB word", longLetters(3 << 20)},
		// Within 8 bytes per token but about 1,500 tokens: tokenized, then
		// found longer than maxModelLen.
		{"1500 tokens", strings.Repeat("a ", 1500)},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			beforeTok := stageSum(t, st, "tokenize")
			start := time.Now()
			r := mustDo(t, http.MethodPost, st.URL("/v1/completions"), mustJSON(t, completionRequest(tt.prompt, false)), nil)
			took := time.Since(start)
			tokTime := stageSum(t, st, "tokenize") - beforeTok
			t.Logf("%s: %d in %v end to end, %.3f ms in the router's tokenize stage", tt.name, r.status, took, tokTime*1000)
			if r.status != 400 {
				t.Errorf("over-long prompt: %v, want the engine's 400", r)
			}
			if got := scrape(t, st).Sum("warmroute_scorer_tokenize_errors_total", map[string]string{"reason": "too_long"}); got != float64(i+1) {
				t.Errorf("tokenize_errors_total{too_long} = %v, want %d", got, i+1)
			}
			if tokTime > 1 { // generous: the bound makes it microseconds
				t.Errorf("the tokenize stage took %.2f s for an over-long prompt", tokTime)
			}
		})
	}
	if r := mustDo(t, http.MethodPost, st.URL("/v1/completions"), mustJSON(t, completionRequest(words("ok", 20), false)), nil); r.status != 200 {
		t.Fatalf("good request after the over-long ones: %v", r)
	}
	if got := scrape(t, st).Sum("warmroute_scorer_tokenize_errors_total", map[string]string{"reason": "too_long"}); got != float64(len(tests)) {
		t.Errorf("the good request counted as too long: tokenize_errors_total{too_long} = %v", got)
	}
}

// longLetters is n random lowercase letters: one word to a BPE tokenizer.
func longLetters(n int) string {
	r := rand.New(rand.NewPCG(7, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + r.IntN(26))
	}
	return string(b)
}

// stageSum is the seconds the router spent in one decision stage so far.
func stageSum(t *testing.T, st *harness.Stack, stage string) float64 {
	t.Helper()
	f, ok := scrape(t, st)["warmroute_scorer_stage_duration_seconds"]
	if !ok {
		return 0
	}
	var sum float64
	for _, s := range f.GetMetric() {
		for _, lp := range s.GetLabel() {
			if lp.GetName() == "stage" && lp.GetValue() == stage {
				sum += s.GetHistogram().GetSampleSum()
			}
		}
	}
	return sum
}
