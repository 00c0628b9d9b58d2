package events

import (
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
	// Default 10m.
	MaxAge time.Duration
	// Replicas is the stream's replication factor in a cluster; default 1.
	Replicas int
}

// DefaultStreamMaxAge is StreamConfig.MaxAge's default.
const DefaultStreamMaxAge = 10 * time.Minute

// EnsureStream creates the stream, or updates it to cfg, capturing every
// model's event subjects. Relays keep publishing with core NATS: the server
// stores whatever reaches a stream's subjects, so the live path keeps core
// latency and the relay's own bounded, counted buffer stays the one place
// where messages wait for NATS.
func EnsureStream(ctx context.Context, nc *nats.Conn, cfg StreamConfig) error {
	if cfg.Name == "" {
		return fmt.Errorf("ensuring event stream: empty name: %w", ErrInvalidConfig)
	}
	setDefault(&cfg.MaxAge, DefaultStreamMaxAge)
	setDefault(&cfg.Replicas, 1)
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

// replayStream applies every retained message of the followed models, in
// stream order, before Run starts on the live queue. Live messages that
// arrived meanwhile wait in the queue; those already replayed are then
// dropped as duplicates by their sequence number, so nothing is applied twice
// and nothing between the stream's end and the live subscription is missed.
func (s *Subscriber) replayStream(ctx context.Context) (int, error) {
	return replayStream(ctx, s.nc, "event", s.cfg.ReplayStream, s.eventSubjects(), 4096, func(msg jetstream.Msg) {
		s.handle(inbound{msg: &nats.Msg{Subject: msg.Subject(), Header: msg.Headers(), Data: msg.Data()},
			at: s.now(), replayed: true})
	})
}

// ensureStream creates the relay's stream, retrying with backoff while NATS
// is unreachable. Until it exists messages are still delivered live, just
// not retained.
func (r *Relay) ensureStream(ctx context.Context) {
	bo := newBackoff(r.cfg.BackoffMin, r.cfg.BackoffMax)
	for {
		tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := EnsureStream(tctx, r.nc, r.cfg.Stream)
		cancel()
		if err == nil {
			r.log.Info("event stream ready", "stream", r.cfg.Stream.Name)
			return
		}
		r.log.Warn("ensuring event stream; retrying", "stream", r.cfg.Stream.Name, "err", err)
		if !sleep(ctx, bo.next()) {
			return
		}
	}
}
