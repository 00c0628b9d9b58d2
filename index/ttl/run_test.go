package ttl

import (
	"context"
	"testing"
	"time"
)

// TestRun drives Run with a manual ticker: each tick is one step, and Run
// returns nil once its context is done.
func TestRun(t *testing.T) {
	h := newHarness(t, Config{Mode: ModeAdaptive}, func(o *Options) { o.Backlog = backlog(250 * time.Millisecond) })
	ticks := make(chan time.Time)
	stopped := make(chan struct{})
	h.newTicker = func(d time.Duration) (<-chan time.Time, func()) {
		if d != DefaultInterval {
			t.Errorf("ticker interval %v, want %v", d, DefaultInterval)
		}
		return ticks, func() { close(stopped) }
	}
	h.feed(0, "e", "m", referenceLatencies())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- h.Run(ctx) }()
	for range 3 { // Run stepped once on start; each tick is one more round
		ticks <- t0
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run returned %v", err)
	}
	<-stopped
	// Four rounds from 2 s towards 1.5 s in 100 ms steps, held at the band.
	if got := h.TTL("e", "m"); got != 1600*time.Millisecond {
		t.Fatalf("TTL after four rounds %v, want 1.6s", got)
	}
}
