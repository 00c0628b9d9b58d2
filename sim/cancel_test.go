package sim

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestClientCancellationReleasesSlots starts requests that cannot finish,
// waits until the gauges show them running and waiting, hangs up every
// client, and checks the gauges return to zero and the requests count as
// cancelled.
func TestClientCancellationReleasesSlots(t *testing.T) {
	tests := []struct {
		name                 string
		opts                 Options
		path, body           string
		clients              int
		wantRunning, waiting float64
		api                  string
	}{
		{"waiting and prefilling", Options{MaxRunning: 1, TTFT: time.Hour}, "/v1/completions",
			`{"model":"sim-model","prompt":"x"}`, 2, 1, 1, "completions"},
		{"json mid-decode", Options{DecodePerToken: time.Hour}, "/v1/completions",
			`{"model":"sim-model","prompt":"x","max_tokens":3}`, 1, 1, 0, "completions"},
		{"stream mid-decode", Options{DecodePerToken: time.Hour}, "/v1/completions",
			`{"model":"sim-model","prompt":"x","max_tokens":3,"stream":true}`, 1, 1, 0, "completions"},
		{"chat streams queued", Options{MaxRunning: 1, DecodePerToken: time.Hour}, "/v1/chat/completions",
			`{"model":"sim-model","messages":[{"role":"user","content":"x"}],"stream":true}`, 3, 1, 2, "chat_completions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ts := startServer(t, tt.opts)
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			for range tt.clients {
				wg.Go(func() { doAndDrain(ctx, ts.URL+tt.path, tt.body) })
			}
			waitGauges(t, s, tt.wantRunning, tt.waiting)
			cancel()
			wg.Wait()
			waitGauges(t, s, 0, 0)
			waitCounter(t, s, tt.api, outcomeCancelled, float64(tt.clients))
		})
	}
}

// doAndDrain sends one request and reads its response until ctx ends it.
func doAndDrain(ctx context.Context, url, body string) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}
