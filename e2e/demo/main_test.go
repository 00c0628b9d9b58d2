package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/internal/testlog"
	"github.com/warmroute/warmroute/internal/testwait"
)

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    options
		wantErr bool
	}{
		{name: "defaults", want: options{port: 8080}},
		{name: "all flags", args: []string{"-port", "0", "-keep-logs"}, want: options{port: 0, keepLogs: true}},
		{name: "bad port", args: []string{"-port", "x"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFlags(tt.args, io.Discard)
			if (err != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
				t.Fatalf("parseFlags(%q) = %+v, %v; want %+v, error %v", tt.args, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

var curlURL = regexp.MustCompile(`curl -si (http://\S+)`)

// TestDemo runs the demo as a user would: wait for its instructions, send
// the printed request, press Ctrl-C (cancel), and expect a clean stop.
func TestDemo(t *testing.T) {
	harness.EnvoyForTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out testlog.Buffer // read while run prints
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-port", "0"}, &out, io.Discard) }()

	testwait.Until(t, 2*time.Minute, func() string {
		select {
		case err := <-done:
			t.Fatalf("demo ended before it was ready: %v\n%s", err, out.String())
		default:
		}
		if !strings.Contains(out.String(), "Press Ctrl-C") {
			return "demo not ready:\n" + out.String()
		}
		return ""
	})
	m := curlURL.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no curl command in:\n%s", out.String())
	}
	// The printed request, twice: the second must find the first's prefix,
	// predicted or already confirmed by the simulator's KV events.
	body := `{"model": "` + model + `", "messages": ` + demoMessages + `}`
	var decision string
	for range 2 {
		resp, err := http.Post(m[1], "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("x-warmroute-served-by") == "" {
			t.Fatalf("printed request got %s, served by %q", resp.Status, resp.Header.Get("x-warmroute-served-by"))
		}
		decision = resp.Header.Get("x-warmroute-decision")
	}
	if !strings.HasPrefix(decision, "basis=speculative") && !strings.HasPrefix(decision, "basis=confirmed") {
		t.Fatalf("the repeated request was routed with %q, want a prefix match", decision)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("demo stopped with %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("demo did not stop within a minute of Ctrl-C")
	}
}
