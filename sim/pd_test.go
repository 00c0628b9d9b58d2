package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/warmroute/warmroute/api"
)

// recordingPrefiller wraps a prefiller's handler and keeps the bodies it
// was sent.
type recordingPrefiller struct {
	next   http.Handler
	mu     sync.Mutex
	bodies []map[string]any
}

func (p *recordingPrefiller) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	p.mu.Lock()
	p.bodies = append(p.bodies, m)
	p.mu.Unlock()
	r.Body = io.NopCloser(strings.NewReader(string(b)))
	p.next.ServeHTTP(w, r)
}

func pdPair(t *testing.T) (prefiller *Server, rec *recordingPrefiller, pre *httptest.Server, decoder *Server, dec *httptest.Server) {
	t.Helper()
	prefiller, err := New(Options{ID: "pre", Role: RolePrefill, PromptTokensDetails: true, BlockSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	rec = &recordingPrefiller{next: prefiller.Handler()}
	pre = httptest.NewServer(rec)
	t.Cleanup(pre.Close)
	decoder, dec = startServer(t, Options{ID: "dec", Role: RoleDecode, PromptTokensDetails: true, BlockSize: 4})
	return prefiller, rec, pre, decoder, dec
}

// TestDecodeRolePrefillsRemotely: a decode simulator sends the prompt to
// the named prefiller as a prefill request first, stores nothing itself,
// and reports the prefiller's cached tokens; the prefiller's cache holds
// the prompt.
func TestDecodeRolePrefillsRemotely(t *testing.T) {
	prefiller, rec, pre, decoder, dec := pdPair(t)
	hostPort := strings.TrimPrefix(pre.URL, "http://")
	body := `{"model":"sim-model","prompt":"` + strings.Repeat("alpha beta gamma delta ", 8) + `","max_tokens":5,"stream":true,"stream_options":{"include_usage":true}}`
	var cached []int
	for range 2 {
		resp := post(t, dec.URL, "/v1/completions", strings.Replace(body, `"stream":true`, `"stream":false`, 1), map[string]string{api.PrefillerHeader: hostPort})
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
		if got := resp.Header.Get(api.PrefilledByHeader); got != "pre" {
			t.Fatalf("%s = %q, want pre", api.PrefilledByHeader, got)
		}
		r := decodeResponse(t, b)
		if r.Usage.CompletionTokens != 5 {
			t.Fatalf("decoded %d tokens, want 5", r.Usage.CompletionTokens)
		}
		cached = append(cached, *r.Usage.PromptTokensDetails.CachedTokens)
	}
	if cached[0] != 0 || cached[1] == 0 || cached[1]%4 != 0 {
		t.Fatalf("cached tokens %v, want 0 then the prefiller's warm blocks", cached)
	}
	if n := len(prefiller.Engine().CacheState().Blocks); n == 0 {
		t.Fatal("the prefiller cached nothing")
	}
	if n := len(decoder.Engine().CacheState().Blocks); n != 0 {
		t.Fatalf("the decoder cached %d blocks of a remotely prefilled prompt", n)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	first := rec.bodies[0]
	kv, _ := first["kv_transfer_params"].(map[string]any)
	if kv["do_remote_decode"] != true || kv["do_remote_prefill"] != false || first["max_tokens"] != 1.0 || first["stream"] != false {
		t.Fatalf("prefill request %v: want kv_transfer_params.do_remote_decode, max_tokens 1, stream false", first)
	}
	if _, ok := first["stream_options"]; ok {
		t.Fatalf("prefill request keeps stream_options: %v", first)
	}
}

// TestPrefillAnswersTransferParams: a prefill request's answer carries
// kv_transfer_params naming the prefiller and its blocks; others do not.
func TestPrefillAnswersTransferParams(t *testing.T) {
	_, ts := startServer(t, Options{ID: "pre", PromptTokensDetails: true, BlockSize: 4})
	prompt := strings.Repeat("one two three four ", 4)
	for _, tt := range []struct {
		name, extra string
		want        bool
	}{{"prefill request", `,"kv_transfer_params":{"do_remote_decode":true}`, true}, {"plain request", ``, false}} {
		t.Run(tt.name, func(t *testing.T) {
			resp := post(t, ts.URL, "/v1/completions", `{"model":"sim-model","prompt":"`+prompt+`","max_tokens":1`+tt.extra+`}`, nil)
			defer resp.Body.Close()
			var out struct {
				KV *kvTransferParams `json:"kv_transfer_params"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
				t.Fatal(err)
			}
			if (out.KV != nil) != tt.want {
				t.Fatalf("kv_transfer_params = %+v, want present %v", out.KV, tt.want)
			}
			if tt.want && (!out.KV.DoRemotePrefill || out.KV.RemoteEngineID != "pre" || len(out.KV.RemoteBlockIDs) == 0) {
				t.Fatalf("kv_transfer_params = %+v", out.KV)
			}
		})
	}
}

// TestDecodeRoleRemotePrefillErrors: a bad header is 400, an unreachable
// prefiller 502, a prefiller's error status passes through; a request
// without the header, or to a simulator not in the decode role, is served
// whole as before.
func TestDecodeRoleRemotePrefillErrors(t *testing.T) {
	_, _, pre, _, dec := pdPair(t)
	gone := httptest.NewServer(http.NotFoundHandler())
	goneAddr := strings.TrimPrefix(gone.URL, "http://")
	gone.Close()
	_, plain := startServer(t, Options{PromptTokensDetails: true})
	hostPort := strings.TrimPrefix(pre.URL, "http://")
	good := `{"model":"sim-model","prompt":"a b c d e f g h","max_tokens":2}`
	tests := []struct {
		name, url, body, header string
		status                  int
		prefilled               bool
	}{
		{"not host:port", dec.URL, good, "prefiller", http.StatusBadRequest, false},
		{"prefiller unreachable", dec.URL, good, goneAddr, http.StatusBadGateway, false},
		{"prefiller refuses the model", dec.URL, `{"model":"other","prompt":"a b c d","max_tokens":2}`, hostPort, http.StatusNotFound, false},
		{"no header: served whole", dec.URL, good, "", http.StatusOK, false},
		{"not a decoder: header ignored", plain.URL, good, hostPort, http.StatusOK, false},
		{"prefilled", dec.URL, good, hostPort, http.StatusOK, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{}
			if tt.header != "" {
				h[api.PrefillerHeader] = tt.header
			}
			resp := post(t, tt.url, "/v1/completions", tt.body, h)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, b)
			}
			if got := resp.Header.Get(api.PrefilledByHeader) != ""; got != tt.prefilled {
				t.Fatalf("prefilled-by header present %v, want %v", got, tt.prefilled)
			}
		})
	}
}

func TestRoleOption(t *testing.T) {
	for _, role := range []string{RoleBoth, RolePrefill, RoleDecode} {
		if err := (Options{Role: role}).WithDefaults().Validate(); err != nil {
			t.Errorf("role %q: %v", role, err)
		}
	}
	if err := (Options{Role: "prefiller"}).WithDefaults().Validate(); err == nil || !strings.Contains(err.Error(), `role "prefiller"`) {
		t.Errorf("unknown role: %v", err)
	}
}
