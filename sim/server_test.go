package sim

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/warmroute/warmroute/api"
)

func TestModelsHealthMetrics(t *testing.T) {
	_, ts := startServer(t, Options{ID: "sim-b", Models: []string{"a", "b"}, MaxModelLen: 1024})
	get := func(path string) (*http.Response, []byte) {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get(api.ServedByHeader) != "sim-b" {
			t.Fatalf("GET %s: status %d, served by %q", path, resp.StatusCode, resp.Header.Get(api.ServedByHeader))
		}
		return resp, raw
	}
	t.Run("models", func(t *testing.T) {
		_, raw := get("/v1/models")
		var list modelList
		if err := json.Unmarshal(raw, &list); err != nil {
			t.Fatal(err)
		}
		if list.Object != "list" || len(list.Data) != 2 || list.Data[0].ID != "a" || list.Data[1].ID != "b" ||
			list.Data[0].Object != "model" || list.Data[0].MaxModelLen != 1024 {
			t.Fatalf("models = %s", raw)
		}
	})
	t.Run("health", func(t *testing.T) {
		if _, raw := get("/health"); len(raw) != 0 {
			t.Fatalf("health body %q, want empty", raw)
		}
	})
	t.Run("metrics", func(t *testing.T) {
		post(t, ts.URL, "/v1/completions", `{"model":"a","prompt":"one two","max_tokens":3}`, nil).Body.Close()
		_, raw := get("/metrics")
		for _, want := range []string{
			"vllm:num_requests_running 0", "vllm:num_requests_waiting 0",
			"vllm:prompt_tokens_total 2", "vllm:generation_tokens_total 3",
			`warmroute_sim_requests_total{api="completions",outcome="ok"} 1`,
		} {
			if !strings.Contains(string(raw), want) {
				t.Errorf("metrics lack %q", want)
			}
		}
	})
}

// serve starts s on a loopback port and returns its URL and a stop function
// that returns Serve's error.
func serve(t *testing.T, s *Server) (string, func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	return "http://" + ln.Addr().String(), func() error { cancel(); return <-done }
}

func TestServeShutsDownGracefully(t *testing.T) {
	s, err := New(Options{DecodePerToken: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	url, stop := serve(t, s)
	resp := post(t, url, "/v1/completions", `{"model":"sim-model","prompt":"x","max_tokens":20,"stream":true}`, nil)
	defer resp.Body.Close()
	// The stream is in flight when shutdown starts; a graceful stop lets it
	// finish with [DONE].
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	chunks := readSSE(t, resp.Body)
	if len(chunks) != 20 {
		t.Fatalf("in-flight stream got %d chunks, want 20", len(chunks))
	}
	if err := <-stopped; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if _, err := http.Get(url + "/health"); err == nil {
		t.Fatal("server still answering after Serve returned")
	}
}

func TestServeCancelsRequestsAfterGrace(t *testing.T) {
	s, err := New(Options{ShutdownGrace: 10 * time.Millisecond, TTFT: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	url, stop := serve(t, s)
	status := make(chan int, 1)
	go func() {
		resp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(smallCompletion))
		if err != nil {
			status <- 0
			return
		}
		resp.Body.Close()
		status <- resp.StatusCode
	}()
	waitGauges(t, s, 1, 0)
	if err := stop(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	// Serve has returned, so the handler has too: no polling here.
	if r := testutil.ToFloat64(s.engine.metrics.running); r != 0 {
		t.Fatalf("running = %v after Serve returned", r)
	}
	if c := testutil.ToFloat64(s.metrics.requests.WithLabelValues("completions", outcomeCancelled)); c != 1 {
		t.Fatalf("cancelled requests = %v after Serve returned, want 1", c)
	}
	if got := <-status; got != 0 && got != http.StatusServiceUnavailable {
		t.Fatalf("cancelled request answered %d", got)
	}
}

func TestRunFailsOnBusyAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s, err := New(Options{Addr: ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(context.Background()); err == nil {
		t.Fatal("Run on a busy address returned nil")
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts Options
	}{
		{"negative decode", Options{DecodePerToken: -1}},
		{"negative max running", Options{MaxRunning: -1}},
		{"empty model name", Options{Models: []string{"a", ""}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.opts); err == nil {
				t.Fatal("want an error")
			}
		})
	}
}

func TestBindFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		check   func(Options) bool
		wantErr bool
	}{
		{"defaults", nil, func(o Options) bool {
			o = o.WithDefaults()
			return o.Addr == DefaultAddr && o.ID == DefaultAddr && len(o.Models) == 1 && o.Models[0] == DefaultModel &&
				o.TTFT == DefaultTTFT && o.DecodePerToken == DefaultDecodePerToken && !o.PromptTokensDetails
		}, false},
		{"all set", []string{"--addr", "127.0.0.1:9", "--id", "pod-1", "--models", "a, b", "--ttft", "0",
			"--prefill-per-token", "1us", "--decode-per-token", "2ms", "--max-running", "3", "--prompt-tokens-details"},
			func(o Options) bool {
				return o.Addr == "127.0.0.1:9" && o.ID == "pod-1" && strings.Join(o.Models, "|") == "a|b" &&
					o.TTFT == 0 && o.PrefillPerToken == time.Microsecond && o.DecodePerToken == 2*time.Millisecond &&
					o.MaxRunning == 3 && o.PromptTokensDetails
			}, false},
		{"empty model", []string{"--models", "a,,b"}, nil, true},
		{"bad duration", []string{"--ttft", "fast"}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o Options
			fs := flag.NewFlagSet("sim", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			o.BindFlags(fs)
			err := fs.Parse(tt.args)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Parse error = %v, want error %v", err, tt.wantErr)
			}
			if err == nil && !tt.check(o) {
				t.Fatalf("options %+v", o)
			}
		})
	}
}

func TestHandlerGroupRefusesAfterDrain(t *testing.T) {
	var g handlerGroup
	g.drain()
	called := false
	h := g.wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/health", nil))
	if called || rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("after drain: called=%v status=%d", called, rec.Code)
	}
}
