package relay

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/warmroute/warmroute/events/wire"
)

const vllmMetrics = `# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 3.0
vllm:num_requests_running{engine="1",model_name="m"} 2.0
vllm:num_requests_waiting{engine="0",model_name="m"} 1.0
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.25
vllm:kv_cache_usage_perc{engine="1",model_name="m"} 0.5
vllm:num_requests_running_total{x="y"} 99
`

func TestParseEngineLoad(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    [3]float64
		wantErr bool
	}{
		{"vllm exposition, summed across engines", vllmMetrics, [3]float64{5, 1, 0.5}, false},
		{"timestamps and no labels", "vllm:num_requests_waiting 4 1700000000\n", [3]float64{0, 4, 0}, false},
		{"labels with spaces and braces", `vllm:num_requests_running{a="x y}"} 7` + "\n", [3]float64{7, 0, 0}, false},
		{"malformed lines skipped", "vllm:num_requests_running{\nvllm:num_requests_running abc\nvllm:num_requests_waiting 2\n", [3]float64{0, 2, 0}, false},
		{"sglang exposition (its own names, as SGLang 0.5.23 exports them)", "# HELP sglang:num_running_reqs The number of running requests.\n# TYPE sglang:num_running_reqs gauge\n" +
			`sglang:num_running_reqs{engine_type="unified",model_name="m",pp_rank="0",tp_rank="0"} 3.0` + "\n" +
			`sglang:num_queue_reqs{model_name="m",tp_rank="0"} 2.0` + "\n" + `sglang:token_usage{model_name="m",tp_rank="0"} 0.25` + "\n",
			[3]float64{3, 2, 0.25}, false},
		{"not a vllm endpoint", "go_goroutines 12\n", [3]float64{}, true},
		{"empty", "", [3]float64{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseEngineLoad(strings.NewReader(tc.in))
			if tc.wantErr {
				if !errors.Is(err, wire.ErrMalformed) {
					t.Fatalf("err = %v, want ErrMalformed", err)
				}
				return
			}
			if err != nil || got.Running != tc.want[0] || got.Waiting != tc.want[1] || got.KVCacheUsage != tc.want[2] {
				t.Fatalf("parseEngineLoad = %+v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func FuzzParseEngineLoad(f *testing.F) {
	f.Add(vllmMetrics)
	f.Add("vllm:num_requests_waiting 4 1700000000\n")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = parseEngineLoad(strings.NewReader(s)) // must not panic
	})
}

func TestScraper(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(vllmMetrics))
	}))
	defer srv.Close()
	load, err := newScraper(srv.URL+"/metrics", 0).scrape(context.Background())
	if err != nil || load.Running != 5 || load.ScrapedAt.IsZero() {
		t.Fatalf("scrape = %+v, %v", load, err)
	}
	if _, err := newScraper(srv.URL+"/nope", 0).scrape(context.Background()); err == nil {
		t.Fatal("scrape of a 404 succeeded")
	}
	if newScraper("", 0) != nil {
		t.Fatal("empty URL should disable scraping")
	}
}

func TestParseReplayFrames(t *testing.T) {
	seq := []byte{0, 0, 0, 0, 0, 0, 0, 9}
	tests := []struct {
		name    string
		frames  [][]byte
		wantErr bool
	}{
		{"old layout", [][]byte{{}, seq, []byte("p")}, false},
		{"new layout", [][]byte{{}, []byte("topic"), seq, []byte("p")}, false},
		{"new layout empty topic", [][]byte{{}, {}, seq, []byte("p")}, false},
		{"no delimiter", [][]byte{seq, []byte("p")}, false},
		{"short seq", [][]byte{{}, {1, 2}, []byte("p")}, true},
		{"one frame", [][]byte{seq}, true},
		{"too many frames", [][]byte{{}, {}, {}, seq, []byte("p")}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, payload, err := parseReplayFrames(tc.frames)
			if tc.wantErr {
				if !errors.Is(err, wire.ErrMalformed) {
					t.Fatalf("err = %v, want ErrMalformed", err)
				}
				return
			}
			if err != nil || got != 9 || string(payload) != "p" {
				t.Fatalf("parseReplayFrames = %d %q %v", got, payload, err)
			}
		})
	}
}
