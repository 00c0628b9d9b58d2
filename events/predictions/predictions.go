package predictions

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/index"
)

// PredictionsConfig configures a Predictions share. Zero values mean
// defaults, except Replica, which is required.
type Options struct {
	// Replica names this router process; it must differ between replicas
	// and between a replica's restarts (see NewReplicaID), because it is how
	// a replica recognises and skips its own messages.
	Replica string
	// QueueSize bounds predictions waiting to be published and received
	// messages waiting to be applied; overflow is dropped and counted.
	// Default 4096.
	QueueSize int
	// MaxTTL caps a remote prediction's expiry at the local clock's now plus
	// MaxTTL, whatever the decider's clock said (the local maximum stale
	// window). Default 5s.
	MaxTTL time.Duration
	// Models limits the followed predictions to these models' subjects;
	// empty follows every model.
	Models []string
	// Stream names a JetStream stream (EnsurePredictionStream) to replay at
	// start, so a restarting replica gets the predictions still live; empty
	// follows live messages only.
	Stream string
	// ReplayTimeout bounds the start-up replay. Default 10s.
	ReplayTimeout time.Duration
}

// Predictions shares speculative predictions between router replicas over
// NATS: it publishes this replica's (Predicted, the scorer's
// PredictionSink) and applies every other replica's to the index with
// SpeculateRemote, keeping the decider's absolute expiry.
//
// Create it with NewPredictions and call Run once. Predicted and Ready are
// safe for concurrent use; the zero value is not usable.
type Share struct {
	cfg     Options
	nc      *nats.Conn
	ix      *index.Index
	metrics *predictionMetrics
	log     *slog.Logger
	out     chan index.Prediction
	in      chan *nats.Msg
	ready   chan struct{}
	readyMu sync.Once
}

// NewPredictions prepares a share of ix's predictions over nc. Metrics go to
// reg (nil: not registered); log may be nil.
func New(cfg Options, nc *nats.Conn, ix *index.Index, reg prometheus.Registerer,
	log *slog.Logger) (*Share, error) {
	if nc == nil || ix == nil || cfg.Replica == "" {
		return nil, fmt.Errorf("creating prediction share: need a NATS connection, an index and a replica id: %w",
			ErrInvalidConfig)
	}
	if cfg.QueueSize < 0 || cfg.MaxTTL < 0 || cfg.ReplayTimeout < 0 {
		return nil, fmt.Errorf("creating prediction share: negative queue size or duration: %w", ErrInvalidConfig)
	}
	cfg.QueueSize = cmp.Or(cfg.QueueSize, 4096)
	cfg.MaxTTL = cmp.Or(cfg.MaxTTL, 5*time.Second)
	cfg.ReplayTimeout = cmp.Or(cfg.ReplayTimeout, 10*time.Second)
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Share{cfg: cfg, nc: nc, ix: ix, metrics: newPredictionMetrics(reg), log: log,
		out: make(chan index.Prediction, cfg.QueueSize), in: make(chan *nats.Msg, cfg.QueueSize),
		ready: make(chan struct{})}, nil
}

// Predicted queues p for publishing. It never blocks: when the queue is
// full, p is dropped and counted. It implements scorer.PredictionSink; p.Keys
// is kept until published and must not be modified.
func (p *Share) Predicted(pr index.Prediction) {
	select {
	case p.out <- pr:
	default:
		p.metrics.dropped.WithLabelValues("queue_full").Inc()
	}
}

// Ready is closed once Run has subscribed and, with a Stream, replayed it
// (or given up, counted and logged).
func (p *Share) Ready() <-chan struct{} { return p.ready }

func (p *Share) markReady() { p.readyMu.Do(func() { close(p.ready) }) }

// Run subscribes to the other replicas' predictions, replays the stream
// when configured, and then publishes and applies until ctx is done. It
// returns an error only when it cannot subscribe; Ready is closed either way.
func (p *Share) Run(ctx context.Context) error {
	defer p.markReady()
	subs, err := p.subscribe()
	defer func() {
		for _, s := range subs {
			_ = s.Unsubscribe()
		}
	}()
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	wg.Go(func() { p.publishLoop(ctx) })
	p.catchUp(ctx)
	p.markReady()
	p.applyLoop(ctx)
	wg.Wait()
	return nil
}

func (p *Share) subscribe() ([]*nats.Subscription, error) {
	var subs []*nats.Subscription
	for _, subj := range p.subjects() {
		sub, err := p.nc.Subscribe(subj, p.enqueue)
		if err != nil {
			return subs, fmt.Errorf("subscribing to %s: %w", subj, err)
		}
		_ = sub.SetPendingLimits(-1, -1) // the handler never blocks; the bounded queue counts overflow
		subs = append(subs, sub)
	}
	if err := p.nc.Flush(); err != nil && p.nc.IsConnected() {
		return subs, fmt.Errorf("subscribing to predictions: %w", err)
	}
	return subs, nil
}

func (p *Share) subjects() []string {
	if len(p.cfg.Models) == 0 {
		return []string{api.PredictionWildcard("")}
	}
	out := make([]string, 0, len(p.cfg.Models))
	for _, m := range p.cfg.Models {
		out = append(out, api.PredictionWildcard(m))
	}
	return out
}

// enqueue is the NATS handler: it never blocks. A dropped prediction only
// costs the other replicas a speculative match.
func (p *Share) enqueue(msg *nats.Msg) {
	select {
	case p.in <- msg:
	default:
		p.metrics.received.WithLabelValues("overflow").Inc()
	}
}

// NewReplicaID returns name followed by a random suffix, unique to this
// process, for PredictionsConfig.Replica: a restarted replica must not take
// its former messages for its own, since they are predictions it no longer
// holds.
func NewReplicaID(name string) string {
	return fmt.Sprintf("%s-%08x", name, rand.Uint32())
}
