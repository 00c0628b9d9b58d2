package router

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/events/eventstest"
	"github.com/warmroute/warmroute/internal/testwait"
)

// TestOpenAffinityReplay: with predictions shared, the affinity share
// replays the affinity stream exactly when events.jetStream.enabled is set
// (each replay ends in one replays_total count; Close waits for it).
func TestOpenAffinityReplay(t *testing.T) {
	ns, err := bus.StartEmbeddedWith(bus.EmbeddedOptions{Host: "127.0.0.1", JetStreamDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Close)
	for _, jetStream := range []bool{false, true} {
		c, err := bus.Open(bus.Config{URL: ns.ClientURL()}, "test-replica", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		reg := prometheus.NewRegistry()
		r := &Router{reg: reg, bus: c, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
		r.cfg.Events.URL, r.cfg.Events.Predictions.Share, r.cfg.Events.JetStream.Enabled = ns.ClientURL(), true, jetStream
		if err := r.openAffinity(); err != nil || r.affinityShare == nil {
			t.Fatalf("openAffinity = %v, share %v", err, r.affinityShare)
		}
		if err := r.affinityShare.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		if jetStream {
			testwait.Until(t, 30*time.Second, func() string {
				if eventstest.CounterValue(t, reg, "warmroute_affinity_replays_total", "result", "partial") != 1 {
					return "no replay of the new affinity stream"
				}
				return ""
			})
		}
		r.affinityShare.Close()
		c.Close()
		var n float64
		for _, res := range []string{"complete", "partial", "failed"} {
			n += eventstest.CounterValue(t, reg, "warmroute_affinity_replays_total", "result", res)
		}
		if want := map[bool]float64{false: 0, true: 1}[jetStream]; n != want {
			t.Errorf("jetStream %v: %v replays, want %v", jetStream, n, want)
		}
	}
}
