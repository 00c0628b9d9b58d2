package bus

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/warmroute/warmroute/api"
)

// StreamConfig describes the JetStream stream that retains event messages
// (batches and resets, not heartbeats) so a restarting router can rebuild
// its index by replaying them. The zero Name means no stream.
type StreamConfig struct {
	// Name is the stream's name.
	Name string
	// MaxAge bounds retention, and so a restarting router's replay time.
	// Default DefaultMaxAge.
	MaxAge time.Duration
	// Replicas is the stream's replication factor in a cluster; default 1.
	Replicas int
}

// EnsureStream creates the stream, or updates it to cfg, capturing every
// model's event subjects. Relays keep publishing with core NATS: the server
// stores whatever reaches a stream's subjects, so the live path keeps core
// latency and the relay's own bounded, counted buffer stays the one place
// where messages wait for NATS.
func EnsureStream(ctx context.Context, nc *nats.Conn, cfg StreamConfig) error {
	if cfg.Name == "" {
		return fmt.Errorf("ensuring event stream: empty name: %w", ErrInvalidConfig)
	}
	cfg.MaxAge = cmp.Or(cfg.MaxAge, DefaultMaxAge)
	cfg.Replicas = cmp.Or(cfg.Replicas, 1)
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("ensuring event stream %s: %w", cfg.Name, err)
	}
	_, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: cfg.Name, Subjects: []string{api.EventSubjectPrefix + ".>"},
		Retention: jetstream.LimitsPolicy, Discard: jetstream.DiscardOld, MaxAge: cfg.MaxAge,
		Storage: jetstream.FileStorage, Replicas: cfg.Replicas,
		Description: "warmroute KV-cache event batches, replayed by restarting routers",
	})
	if err != nil {
		return fmt.Errorf("ensuring event stream %s: %w", cfg.Name, err)
	}
	return nil
}
