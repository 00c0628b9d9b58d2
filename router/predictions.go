package router

import (
	"fmt"
	"log/slog"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/events/predictions"
	"github.com/warmroute/warmroute/events/subscriber"
)

// newShare builds the prediction share when events.predictions.share is
// set, on the events connection nc, replaying the prediction stream when
// JetStream is enabled too. It returns nil when sharing is off.
func newShare(cfg Config, ec subscriber.Config, nc *nats.Conn, reg prometheus.Registerer,
	log *slog.Logger) (*predictions.Share, error) {
	if !ec.Predictions.Share {
		return nil, nil
	}
	m, err := predictions.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	tc := cfg.TTL.WithDefaults()
	share, err := predictions.New(predictions.Options{Config: ec.Predictions, Replica: predictions.NewReplicaID(replicaName()),
		MaxTTL: tc.MaxStale.D(), Replay: ec.JetStream.Enabled}, nc, m, log)
	if err != nil {
		return nil, fmt.Errorf("creating prediction share: %w", err)
	}
	return share, nil
}
