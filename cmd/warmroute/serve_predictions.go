package main

import (
	"flag"
	"fmt"
	"log/slog"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/predictions"
	"github.com/warmroute/warmroute/events/subscriber"
)

// newShare builds the prediction share when events.predictions.share is
// set, on the events connection nc, replaying the prediction stream when
// JetStream is enabled too. It returns nil when sharing is off.
func newShare(cfg api.ServeConfig, ec subscriber.Config, nc *nats.Conn, reg prometheus.Registerer,
	log *slog.Logger) (*predictions.Share, error) {
	if !ec.Predictions.Share {
		return nil, nil
	}
	m, err := predictions.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	tc := cfg.TTL.WithDefaults()
	share, err := predictions.New(predictions.Options{Config: ec.Predictions, Replica: predictions.NewReplicaID(tc.Replica),
		MaxTTL: tc.MaxStale.D(), Replay: ec.JetStream.Enabled}, nc, m, log)
	if err != nil {
		return nil, fmt.Errorf("creating prediction share: %w", err)
	}
	return share, nil
}

// predictionFlags are serve's prediction-sharing flags.
type predictionFlags struct{ o api.PredictionsConfig }

func (p *predictionFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&p.o.Share, "share-predictions", false,
		"share speculative predictions with the other router replicas over NATS (turn on for every replica)")
	fs.IntVar(&p.o.QueueSize, "predictions-queue", 0,
		fmt.Sprintf("predictions queued for publishing or applying before drops (default %d)", predictions.DefaultQueueSize))
	fs.StringVar(&p.o.Stream, "predictions-stream", "",
		"JetStream stream retaining predictions for restarting replicas, with --jetstream (default "+predictions.DefaultStream+")")
}

// apply copies flag name onto cfg; it reports false for other flags.
func (p *predictionFlags) apply(cfg *api.PredictionsConfig, name string) bool {
	switch name {
	case "share-predictions":
		cfg.Share = p.o.Share
	case "predictions-queue":
		cfg.QueueSize = p.o.QueueSize
	case "predictions-stream":
		cfg.Stream = p.o.Stream
	default:
		return false
	}
	return true
}
