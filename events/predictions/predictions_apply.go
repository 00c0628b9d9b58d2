package predictions

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/index"
)

// applier is the apply loop's reused decoding state, owned by its goroutine.
type applier struct {
	msg  api.PredictionMessage
	keys []index.Key
}

// applyLoop applies received predictions until ctx is done.
func (p *Share) applyLoop(ctx context.Context) {
	a := &applier{}
	for {
		select {
		case <-ctx.Done():
			return
		case msg := <-p.in:
			p.metrics.received.WithLabelValues(p.apply(a, msg.Data)).Inc()
		}
	}
}

// apply decodes and applies one message and returns its result label.
// Another replica's prediction keeps its absolute expiry, but never beyond
// the local now plus MaxTTL, so a decider whose clock runs ahead cannot make
// a prediction outlive the local stale cap.
func (p *Share) apply(a *applier, data []byte) string {
	if err := a.msg.UnmarshalBinary(data); err != nil {
		p.log.Debug("malformed prediction message", "err", err)
		return "malformed"
	}
	if a.msg.Replica == p.cfg.Replica {
		return "own"
	}
	now := p.ix.Now()
	expires := a.msg.ExpiresAt
	if limit := now.Add(p.cfg.MaxTTL); expires.After(limit) {
		expires = limit
		p.metrics.capped.Inc()
	}
	if !expires.After(now) {
		return "expired"
	}
	a.keys = a.keys[:0]
	for _, k := range a.msg.Keys {
		a.keys = append(a.keys, index.Key(k))
	}
	_, err := p.ix.SpeculateRemote(index.Prediction{Endpoint: a.msg.Endpoint, Model: a.msg.Model, Keys: a.keys,
		Decision: index.DecisionID(a.msg.Decision), DecidedAt: a.msg.DecidedAt, ExpiresAt: expires})
	if err != nil {
		p.log.Debug("remote prediction rejected", "endpoint", a.msg.Endpoint, "err", err)
		return "rejected"
	}
	return "applied"
}

// catchUp replays the configured stream into the index. A failed replay is
// counted and logged; the replica then shares only what arrives live.
func (p *Share) catchUp(ctx context.Context) {
	if !p.cfg.Replay {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, p.cfg.ReplayTimeout)
	defer cancel()
	n, err := p.replay(rctx)
	p.metrics.replayed.Add(float64(n))
	if err != nil {
		p.metrics.replayFailures.Inc()
		p.log.Warn("prediction stream replay incomplete; following live predictions", "stream", p.cfg.Stream,
			"messages", n, "err", err)
		return
	}
	p.log.Info("replayed prediction stream", "stream", p.cfg.Stream, "messages", n)
}

// ensureStream creates the stream that a restarting replica replays. A
// failure is logged, not fatal: predictions are still shared live.
func (p *Share) ensureStream(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := EnsureStream(ctx, p.nc, StreamConfig{Name: p.cfg.Stream, MaxAge: p.cfg.MaxTTL}); err != nil {
		p.log.Warn("prediction stream unavailable; sharing live predictions only", "stream", p.cfg.Stream, "err", err)
	}
}

// replay applies every retained prediction of the followed models. Messages
// that also arrive live meanwhile are applied twice, which is harmless: a
// repeated prediction only re-extends an entry to the same expiry.
func (p *Share) replay(ctx context.Context) (int, error) {
	a := &applier{}
	return bus.Replay(ctx, p.nc, "prediction", p.cfg.Stream, p.subjects(), 1024, func(msg jetstream.Msg) {
		p.metrics.received.WithLabelValues(p.apply(a, msg.Data())).Inc()
	})
}

// StreamConfig describes the JetStream stream that retains shared
// predictions so that a restarting replica can replay those still live.
type StreamConfig struct {
	// Name is the stream's name; required.
	Name string
	// MaxAge bounds retention; set it to the longest TTL any replica uses
	// (its maximum stale window), beyond which no prediction is live.
	// Default 5s.
	MaxAge time.Duration
	// MaxBytes bounds the stream's memory; the oldest predictions go first.
	// Default 256 MiB.
	MaxBytes int64
	// Replicas is the stream's replication factor in a cluster; default 1.
	Replicas int
}

// EnsureStream creates the prediction stream, or updates it to
// cfg. Predictions are kept in memory: they live for seconds, and a NATS
// restart that loses them costs only speculative matches.
func EnsureStream(ctx context.Context, nc *nats.Conn, cfg StreamConfig) error {
	if cfg.Name == "" {
		return fmt.Errorf("ensuring prediction stream: empty name: %w", ErrInvalidConfig)
	}
	cfg.MaxAge = cmp.Or(cfg.MaxAge, 5*time.Second)
	cfg.MaxBytes = cmp.Or(cfg.MaxBytes, 256<<20)
	cfg.Replicas = cmp.Or(cfg.Replicas, 1)
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("ensuring prediction stream %s: %w", cfg.Name, err)
	}
	_, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: cfg.Name, Subjects: []string{api.PredictionSubjectPrefix + ".>"},
		Retention: jetstream.LimitsPolicy, Discard: jetstream.DiscardOld, MaxAge: cfg.MaxAge, MaxBytes: cfg.MaxBytes,
		Storage: jetstream.MemoryStorage, Replicas: cfg.Replicas,
		Description: "warmroute speculative predictions shared between router replicas",
	})
	if err != nil {
		return fmt.Errorf("ensuring prediction stream %s: %w", cfg.Name, err)
	}
	return nil
}
