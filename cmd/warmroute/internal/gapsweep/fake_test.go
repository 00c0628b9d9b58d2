package gapsweep

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/index/ttl"
)

// fakeRouter plays Envoy+router+engine and the router's debug endpoint in
// one httptest server: a prompt whose prefix (up to "\nQuestion") was seen
// before is routed on a prediction to the same endpoint, and hits unless the
// request that left the prediction failed its prefill.
type fakeRouter struct {
	blockSize atomic.Int64
	// blockSizeAfter, when positive, is reported from that many
	// /debug/index calls on, to change the block size mid-sweep.
	blockSizeAfter int64
	indexCalls     atomic.Int64
	noIndex        bool // serve /debug/index as 404, like an older router
	noDecision     bool // no decision header, as behind a router with decisionHeader upstream
	mu             sync.Mutex
	seen           map[string]bool // prefix -> its first request failed
	requests       atomic.Int64
}

func newFakeRouter(t *testing.T, blockSize int) (*fakeRouter, *httptest.Server) {
	f := &fakeRouter{seen: map[string]bool{}}
	f.blockSize.Store(int64(blockSize))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/index", f.index)
	mux.HandleFunc("GET /debug/ttl", f.report)
	mux.HandleFunc("POST /v1/completions", f.complete)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeRouter) index(w http.ResponseWriter, _ *http.Request) {
	n := f.indexCalls.Add(1)
	if f.noIndex {
		http.NotFound(w, nil)
		return
	}
	bs := f.blockSize.Load()
	if f.blockSizeAfter > 0 && n >= f.blockSizeAfter {
		bs *= 2
	}
	_ = json.NewEncoder(w).Encode(api.IndexInfo{BlockSize: int(bs), Grace: api.Duration(10 * time.Second)})
}

func (f *fakeRouter) report(w http.ResponseWriter, _ *http.Request) {
	row := ttl.Row{Endpoint: "a:1", Model: "m", Current: api.Duration(40 * time.Millisecond),
		Advice: ttl.Advice{Samples: 9, P50: api.Duration(10 * time.Millisecond), P95: api.Duration(30 * time.Millisecond)}}
	_ = json.NewEncoder(w).Encode(ttl.Report{Static: api.Duration(2 * time.Second), Rows: []ttl.Row{row}})
}

func (f *fakeRouter) complete(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	var req struct {
		Model  string `json:"model"`
		Prompt string `json:"prompt"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	prefix, _, _ := strings.Cut(req.Prompt, "\nQuestion")
	failPrefill := r.Header.Get(failPrefillHeader) == "true"
	f.mu.Lock()
	firstFailed, seen := f.seen[prefix]
	if !seen {
		f.seen[prefix] = failPrefill
	}
	f.mu.Unlock()
	cached, decision := 0, "basis=none; matched=0c+0s/6; endpoint=a:1; because=least loaded"
	if seen {
		decision = "basis=speculative; matched=0c+5s/6; endpoint=a:1; because=longest prefix"
		if !firstFailed {
			cached = 80
		}
	}
	if !f.noDecision {
		w.Header().Set(api.DecisionHeader, decision)
	}
	if failPrefill {
		http.Error(w, `{"error":{"message":"injected prefill failure"}}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	fmt.Fprintf(w, "data: {\"choices\":[{\"text\":\"ok\"}]}\n\n")
	fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"prompt_tokens_details\":{\"cached_tokens\":%d}}}\n\ndata: [DONE]\n\n", cached)
}
