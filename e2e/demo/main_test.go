package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warmroute/warmroute/e2e/harness"
)

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    options
		wantErr bool
	}{
		{name: "defaults", want: options{port: 8080, mode: "full_duplex"}},
		{name: "all flags", args: []string{"-port", "0", "-mode", "buffered", "-keep-logs"},
			want: options{port: 0, mode: "buffered", keepLogs: true}},
		{name: "bad mode", args: []string{"-mode", "streamed"}, wantErr: true},
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

// lockedBuffer lets the test read what run prints while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var curlURL = regexp.MustCompile(`curl -si (http://\S+)`)

// TestDemo runs the demo as a user would: wait for its instructions, send
// the printed request, press Ctrl-C (cancel), and expect a clean stop.
func TestDemo(t *testing.T) {
	harness.EnvoyForTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out lockedBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-port", "0"}, &out, io.Discard) }()

	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(out.String(), "Press Ctrl-C") {
		select {
		case err := <-done:
			t.Fatalf("demo ended before it was ready: %v\n%s", err, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("demo not ready after 2 minutes:\n%s", out.String())
		}
	}
	m := curlURL.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no curl command in:\n%s", out.String())
	}
	body := `{"model": "` + model + `", "messages": [{"role": "user", "content": "hi"}]}`
	resp, err := http.Post(m[1], "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("x-warmroute-served-by") == "" {
		t.Fatalf("printed request got %s, served by %q", resp.Status, resp.Header.Get("x-warmroute-served-by"))
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
