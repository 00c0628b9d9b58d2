package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/events/predictions"
	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/index"
)

func TestPredictionFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want api.PredictionsConfig
	}{
		{"none", nil, api.PredictionsConfig{}},
		{"share", []string{"--share-predictions"}, api.PredictionsConfig{Share: true}},
		{"tuned", []string{"--share-predictions", "--predictions-queue", "64", "--predictions-stream", "P"},
			api.PredictionsConfig{Share: true, QueueSize: 64, Stream: "P"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			var p predictionFlags
			p.register(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			var got api.PredictionsConfig
			fs.Visit(func(f *flag.Flag) {
				if !p.apply(&got, f.Name) {
					t.Errorf("flag %s not applied", f.Name)
				}
			})
			if got != tc.want {
				t.Fatalf("config = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// startShare builds one replica's share as serve does (newShare) on its
// own connection to url, and starts it on a fresh index.
func startShare(t *testing.T, url string, pc api.PredictionsConfig) (*predictions.Share, *index.Index) {
	t.Helper()
	c, err := bus.Open(bus.Config{URL: url}, "test-replica", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cfg := api.ServeConfig{Events: api.EventsConfig{URL: url, Predictions: pc}}
	ec, err := eventsConfig(cfg.Events)
	if err != nil {
		t.Fatal(err)
	}
	share, err := newShare(cfg, ec, c.Conn(), prometheus.NewRegistry(), slog.New(slog.NewTextHandler(io.Discard, nil)))
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
	on := api.PredictionsConfig{Share: true}
	a, _ := startShare(t, ns.ClientURL(), on)
	_, ixB := startShare(t, ns.ClientURL(), on)
	keys := []index.Key{11, 12, 13}
	now := time.Now()
	a.Predicted(index.Prediction{Endpoint: "10.20.0.1:8000", Model: "org/model-a", Keys: keys, Decision: 1,
		DecidedAt: now, ExpiresAt: now.Add(time.Minute)})
	deadline := time.Now().Add(15 * time.Second)
	for ixB.Lookup(keys, []string{"10.20.0.1:8000"}, nil)[0].Speculative != 3 {
		if time.Now().After(deadline) {
			t.Fatal("B did not apply A's prediction within 15s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st := ixB.Stats(); st.RemoteSpeculated != 3 || st.Speculated != 0 {
		t.Fatalf("B's stats %+v, want 3 remote predictions and no local one", st)
	}
}

func TestNewShareOff(t *testing.T) {
	share, err := newShare(api.ServeConfig{}, subscriberConfigOf(t, api.EventsConfig{}), nil, prometheus.NewRegistry(), nil)
	if err != nil || share != nil {
		t.Fatalf("newShare with sharing off = %v, %v; want nil, nil", share, err)
	}
}

func subscriberConfigOf(t *testing.T, c api.EventsConfig) subscriber.Config {
	t.Helper()
	ec, err := eventsConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	return ec
}
