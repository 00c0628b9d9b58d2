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

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/index"
)

// Options configure a Share: its Config (Share itself is the caller's
// switch) and what serve derives from elsewhere. Zero values mean defaults,
// except Replica, which is required.
type Options struct {
	Config
	// Replica names this router process; it must differ between replicas
	// and between a replica's restarts (see NewReplicaID), because it is how
	// a replica recognises and skips its own messages.
	Replica string
	// MaxTTL caps a remote prediction's expiry at the local clock's now plus
	// MaxTTL, whatever the decider's clock said (the local maximum stale
	// window); it is also the prediction stream's age limit. Default 5s.
	MaxTTL time.Duration
	// Models limits the followed predictions to these models' subjects;
	// empty follows every model.
	Models []string
	// Replay ensures the JetStream stream Config.Stream at start and replays
	// it, so a restarting replica gets the predictions still live; false
	// follows live messages only.
	Replay bool
	// ReplayTimeout bounds the start-up replay. Default 10s.
	ReplayTimeout time.Duration
}

// Share shares speculative predictions between router replicas over
// NATS: it publishes this replica's (Predicted, the scorer's
// PredictionSink) and applies every other replica's to the index with
// SpeculateRemote, keeping the decider's absolute expiry.
//
// Create it with New, Start it once and Close it. Predicted and Ready are
// safe for concurrent use, before Start too (Predicted then only queues);
// the zero value is not usable.
type Share struct {
	cfg     Options
	nc      *nats.Conn
	ix      *index.Index
	metrics *Metrics
	log     *slog.Logger
	out     chan index.Prediction
	in      chan *nats.Msg
	ready   chan struct{}
	readyMu sync.Once

	cancel    context.CancelFunc
	done      chan struct{} // closed when Start's goroutine returned
	closeOnce sync.Once
}

// New prepares a share over nc; it shares nothing until Start. m comes
// from NewMetrics (nil: unregistered metrics); log may be nil.
func New(cfg Options, nc *nats.Conn, m *Metrics, log *slog.Logger) (*Share, error) {
	if nc == nil || cfg.Replica == "" {
		return nil, fmt.Errorf("creating prediction share: need a NATS connection and a replica id: %w",
			ErrInvalidConfig)
	}
	if cfg.QueueSize < 0 || cfg.MaxTTL < 0 || cfg.ReplayTimeout < 0 {
		return nil, fmt.Errorf("creating prediction share: negative queue size or duration: %w", ErrInvalidConfig)
	}
	cfg.Config = cfg.Config.WithDefaults()
	cfg.MaxTTL = cmp.Or(cfg.MaxTTL, 5*time.Second)
	cfg.ReplayTimeout = cmp.Or(cfg.ReplayTimeout, 10*time.Second)
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if m == nil {
		m, _ = NewMetrics(nil) // nothing to register, so no error
	}
	return &Share{cfg: cfg, nc: nc, metrics: m, log: log,
		out: make(chan index.Prediction, cfg.QueueSize), in: make(chan *nats.Msg, cfg.QueueSize),
		ready: make(chan struct{}), done: make(chan struct{})}, nil
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

// Ready is closed once Start has subscribed and, with a Stream, replayed it
// (or given up, counted and logged).
func (p *Share) Ready() <-chan struct{} { return p.ready }

func (p *Share) markReady() { p.readyMu.Do(func() { close(p.ready) }) }

// Start subscribes to the other replicas' predictions and starts the
// goroutines that apply them to ix (replaying the stream first when
// configured) and publish this replica's, until ctx ends or Close. It
// returns an error only when it cannot subscribe; Ready is closed then.
// It may be called once.
func (p *Share) Start(ctx context.Context, ix *index.Index) error {
	if ix == nil {
		p.markReady()
		return fmt.Errorf("starting prediction share: nil index: %w", ErrInvalidConfig)
	}
	p.ix = ix
	subs, err := p.subscribe()
	if err != nil {
		unsubscribe(subs)
		p.markReady()
		return err
	}
	ctx, p.cancel = context.WithCancel(ctx)
	go func() {
		defer close(p.done)
		defer unsubscribe(subs)
		p.run(ctx)
	}()
	p.log.Info("sharing speculative predictions with other replicas", "replica", p.cfg.Replica,
		"stream", p.replayStream())
	return nil
}

// replayStream names the stream replayed at start, "" when none.
func (p *Share) replayStream() string {
	if !p.cfg.Replay {
		return ""
	}
	return p.cfg.Stream
}

func (p *Share) run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { p.publishLoop(ctx) })
	if p.cfg.Replay {
		p.ensureStream(ctx)
	}
	p.catchUp(ctx)
	p.markReady()
	p.applyLoop(ctx)
	wg.Wait()
}

// Close stops the share's goroutines and waits for them; the caller then
// closes the NATS connection. It is idempotent and safe before Start.
func (p *Share) Close() {
	p.closeOnce.Do(func() {
		if p.cancel == nil {
			close(p.done)
			return
		}
		p.cancel()
		<-p.done
	})
}

func unsubscribe(subs []*nats.Subscription) {
	for _, s := range subs {
		_ = s.Unsubscribe()
	}
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
// process, for Options.Replica: a restarted replica must not take
// its former messages for its own, since they are predictions it no longer
// holds.
func NewReplicaID(name string) string {
	return fmt.Sprintf("%s-%08x", name, rand.Uint32())
}
