package router

import (
	"context"
	"io"
	"log/slog"
	"testing"
)

// TestRouterWithoutEvents: with events disabled serve builds no NATS, no
// subscriber and no share (even when sharing is asked for), and the router
// is ready at once.
func TestRouterWithoutEvents(t *testing.T) {
	var cfg Config
	cfg.Events.Disabled, cfg.Events.Predictions.Share = true, true
	r, err := New(cfg.WithDefaults(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if r.bus != nil || r.sub != nil || r.share != nil || r.natsURL() != "" {
		t.Fatalf("events disabled, yet bus %v, subscriber %v, share %v, url %q", r.bus, r.sub, r.share, r.natsURL())
	}
	ready, err := r.startEvents(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-ready:
	default:
		t.Fatal("router without events is not ready at once")
	}
	r.closeEvents()
}
