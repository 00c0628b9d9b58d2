package router

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/scorer"
)

// newDebugMux serves the debug endpoints over an index where a:1 holds two
// blocks of tokens 1..8 (confirmed) and b:1 is predicted to hold the first.
func newDebugMux(t testing.TB) *http.ServeMux {
	t.Helper()
	ix, err := index.New(index.Options{BlockSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	toks := []uint32{1, 2, 3, 4, 5, 6, 7, 8}
	if _, err := ix.Store(index.Stored{Endpoint: "a:1", Hashes: []uint64{1, 2}, Tokens: toks, BlockSize: 4,
		Identity: index.Identity{Model: "m"}}); err != nil {
		t.Fatal(err)
	}
	keys, _ := index.AppendKeys(nil, index.Identity{Model: "m"}, 4, toks[:4])
	if _, err := ix.Speculate("b:1", keys, 1, time.Minute); err != nil {
		t.Fatal(err)
	}
	pools := scorer.NewPools([]scorer.PoolConfig{{Name: "m", Endpoints: []string{"a:1", "b:1"}}}, "")
	r := &Router{pipe: &pipeline{index: ix, pools: pools}}
	mux := http.NewServeMux()
	r.mountDebug(mux)
	return mux
}

func TestIndexDebug(t *testing.T) {
	tests := []struct {
		name, method, target, body string
		status                     int
		want                       string // JSON, compared after decoding
	}{
		{name: "entries confirmed", method: "GET", target: "/debug/index/entries?endpoint=a:1", status: 200,
			want: `{"endpoint":"a:1","confirmed":2,"speculative":0}`},
		{name: "entries speculative", method: "GET", target: "/debug/index/entries?endpoint=b:1", status: 200,
			want: `{"endpoint":"b:1","confirmed":0,"speculative":1}`},
		{name: "entries unknown endpoint", method: "GET", target: "/debug/index/entries?endpoint=c:1", status: 200,
			want: `{"endpoint":"c:1","confirmed":0,"speculative":0}`},
		{name: "entries without endpoint", method: "GET", target: "/debug/index/entries", status: 400},
		{name: "lookup", method: "POST", target: "/debug/index/lookup", status: 200,
			body: `{"model":"m","tokens":[1,2,3,4,5,6,7,8,9]}`,
			want: `{"pool":"m","blocks":2,"blockSize":4,"endpoints":[{"endpoint":"a:1","confirmed":2,"speculative":0,"weighted":2},{"endpoint":"b:1","confirmed":0,"speculative":1,"weighted":0}]}`},
		{name: "lookup other salt misses", method: "POST", target: "/debug/index/lookup", status: 200,
			body: `{"model":"m","cacheSalt":"s","tokens":[1,2,3,4]}`,
			want: `{"pool":"m","blocks":1,"blockSize":4,"endpoints":[{"endpoint":"a:1","confirmed":0,"speculative":0,"weighted":0},{"endpoint":"b:1","confirmed":0,"speculative":0,"weighted":0}]}`},
		{name: "lookup unknown model", method: "POST", target: "/debug/index/lookup", status: 404,
			body: `{"model":"x","tokens":[1]}`},
		{name: "lookup malformed", method: "POST", target: "/debug/index/lookup", status: 400, body: `{"tokens":`},
		{name: "lookup unknown field", method: "POST", target: "/debug/index/lookup", status: 400,
			body: `{"model":"m","prompt":"hi"}`},
		{name: "lookup negative token", method: "POST", target: "/debug/index/lookup", status: 400,
			body: `{"model":"m","tokens":[-1]}`},
		{name: "lookup too large", method: "POST", target: "/debug/index/lookup", status: 400,
			body: `{"model":"m","tokens":[` + strings.Repeat("1,", maxLookupBytes/2) + `1]}`},
		{name: "lookup by GET", method: "GET", target: "/debug/index/lookup", status: 405},
	}
	mux := newDebugMux(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.target, strings.NewReader(tt.body)))
			if rec.Code != tt.status {
				t.Fatalf("status = %d (%q), want %d", rec.Code, rec.Body.String(), tt.status)
			}
			if tt.want != "" && !sameJSON(t, rec.Body.String(), tt.want) {
				t.Fatalf("body = %s, want %s", rec.Body.String(), tt.want)
			}
		})
	}
}

func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("decoding %q: %v", a, err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("decoding %q: %v", b, err)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

// FuzzIndexLookup checks that no body makes the lookup panic or answer
// anything but a result, a bad request or an unknown model.
func FuzzIndexLookup(f *testing.F) {
	for _, s := range []string{`{"model":"m","tokens":[1,2,3,4,5,6,7,8,9]}`, `{"model":"m","cacheSalt":"s","tokens":[1,2,3,4]}`,
		`{"model":"x","tokens":[1]}`, `{"tokens":`, `{"model":"m","prompt":"hi"}`, `{"model":"m","tokens":[-1]}`} {
		f.Add(s)
	}
	mux := newDebugMux(f)
	f.Fuzz(func(t *testing.T, body string) {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("POST", "/debug/index/lookup", strings.NewReader(body)))
		if rec.Code != 200 && rec.Code != 400 && rec.Code != 404 {
			t.Fatalf("status %d for %q", rec.Code, body)
		}
	})
}
