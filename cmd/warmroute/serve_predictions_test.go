package main

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/cmd/warmroute/serveconfig"
	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/internal/testwait"
)

// shareRouter is one replica's events runtime, index and prediction share.
type shareRouter struct {
	ev   *evRouter
	link *predictionLink
	pr   *predictionsRuntime
}

func startShare(t *testing.T, ec api.EventsConfig) *shareRouter {
	t.Helper()
	r := &shareRouter{ev: startTestEvents(t, ec), link: &predictionLink{}}
	cfg := serveconfig.Config{Events: ec}.WithDefaults()
	pr, err := startPredictions(context.Background(), cfg, r.ev.rt, r.ev.ix, r.link, prometheus.NewRegistry(),
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pr.Close) // runs before the events runtime's Close, registered earlier
	r.pr = pr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pr.waitReady(ctx)
	return r
}

func TestStartPredictionsShares(t *testing.T) {
	ec := api.EventsConfig{Listen: "127.0.0.1:0", Predictions: api.PredictionsConfig{Share: true}}
	a := startShare(t, ec)
	b := startShare(t, api.EventsConfig{URL: a.ev.rt.URL(), Predictions: api.PredictionsConfig{Share: true}})
	keys := []index.Key{11, 12, 13}
	now := time.Now()
	a.link.Predicted(index.Prediction{Endpoint: evStatic, Model: evModel, Keys: keys, Decision: 1,
		DecidedAt: now, ExpiresAt: now.Add(time.Minute)})
	testwait.Until(t, evSettle, testwait.That("B applies A's prediction", func() bool {
		return b.ev.ix.Lookup(keys, []string{evStatic}, nil)[0].Speculative == 3
	}))
	if st := b.ev.ix.Stats(); st.RemoteSpeculated != 3 || st.Speculated != 0 {
		t.Fatalf("B's stats %+v, want 3 remote predictions and no local one", st)
	}
}

func TestStartPredictionsOff(t *testing.T) {
	r := startShare(t, api.EventsConfig{Listen: "127.0.0.1:0"})
	if r.link.p.Load() != nil {
		t.Fatal("share linked although events.predictions.share is off")
	}
	r.link.Predicted(index.Prediction{Endpoint: evStatic, Keys: []index.Key{1}}) // a no-op, not a panic
	select {
	case <-r.pr.ready:
	default:
		t.Fatal("runtime without sharing is not ready")
	}
}
