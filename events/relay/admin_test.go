package relay

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestServeAdminPaths(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	stop, err := ServeAdmin(addr, prometheus.NewRegistry(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	for _, tt := range []struct {
		path string
		want int
	}{{"/healthz", http.StatusOK}, {"/metrics", http.StatusOK}, {"/nope", http.StatusNotFound}} {
		resp, err := http.Get("http://" + addr + tt.path)
		if err != nil {
			t.Fatalf("GET %s: %v", tt.path, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("GET %s: %d, want %d", tt.path, resp.StatusCode, tt.want)
		}
	}
}
