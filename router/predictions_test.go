package router

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/events/predictions"
	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/internal/testwait"
)

// startShare builds one replica's share as serve does (newShare) on its
// own connection to url, and starts it on a fresh index.
func startShare(t *testing.T, url string, pc predictions.Config) (*predictions.Share, *index.Index) {
	t.Helper()
	c, err := bus.Open(bus.Config{URL: url}, "test-replica", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	var cfg Config
	cfg.Events.URL, cfg.Events.Predictions = url, pc
	share, err := newShare(cfg, cfg.Events.WithDefaults(), c.Conn(), prometheus.NewRegistry(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil || share == nil {
		t.Fatalf("newShare = %v, %v", share, err)
	}
	ix, err := index.New(index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := share.Start(context.Background(), ix); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(share.Close) // runs before the connection's Close, registered earlier
	select {
	case <-share.Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("share not ready within 30s")
	}
	return share, ix
}

func TestNewShareShares(t *testing.T) {
	ns, err := bus.StartEmbedded("127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Close)
	on := predictions.Config{Share: true}
	a, _ := startShare(t, ns.ClientURL(), on)
	_, ixB := startShare(t, ns.ClientURL(), on)
	keys := []index.Key{11, 12, 13}
	now := time.Now()
	a.Predicted(index.Prediction{Endpoint: "10.20.0.1:8000", Model: "org/model-a", Keys: keys, Decision: 1,
		DecidedAt: now, ExpiresAt: now.Add(time.Minute)})
	testwait.Until(t, 15*time.Second, testwait.That("B applies A's prediction", func() bool {
		return ixB.Lookup(keys, []string{"10.20.0.1:8000"}, nil)[0].Speculative == 3
	}))
	if st := ixB.Stats(); st.RemoteSpeculated != 3 || st.Speculated != 0 {
		t.Fatalf("B's stats %+v, want 3 remote predictions and no local one", st)
	}
}

func TestNewShareOff(t *testing.T) {
	share, err := newShare(Config{}, subscriber.Config{}.WithDefaults(), nil, prometheus.NewRegistry(), nil)
	if err != nil || share != nil {
		t.Fatalf("newShare with sharing off = %v, %v; want nil, nil", share, err)
	}
}
