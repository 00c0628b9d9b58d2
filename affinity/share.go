package affinity

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/warmroute/warmroute/api"
)

// queueSize bounds ids waiting to be published; overflow is dropped and
// counted (the other replicas then answer that id as unsure, never wrongly).
const queueSize = 4096

// Share publishes a Store's locally learnt ids and records every other
// replica's. Build it with NewShare (which hooks it to the store), Start it
// once and Close it.
type Share struct {
	store   *Store
	nc      *nats.Conn
	replica string
	log     *slog.Logger
	out     chan api.AffinityMessage

	// gapMu guards the connection state last seen by lastGap.
	gapMu      sync.Mutex
	reconnects uint64
	gapAt      time.Time

	// replay, when set (EnableReplay), has Start replay the affinity
	// stream; replayDone closes when that replay ends.
	replay     *Replay
	replayDone chan struct{}

	sub    *nats.Subscription
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// NewShare shares store's ids over nc as replica (unique per process, such
// as predictions.NewReplicaID's). log may be nil.
func NewShare(store *Store, nc *nats.Conn, replica string, log *slog.Logger) (*Share, error) {
	if store == nil || nc == nil || replica == "" {
		return nil, fmt.Errorf("creating affinity share: need a store, a NATS connection and a replica id")
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	sh := &Share{store: store, nc: nc, replica: replica, log: log,
		out: make(chan api.AffinityMessage, queueSize), done: make(chan struct{})}
	sh.reconnects = nc.Stats().Reconnects
	store.published = sh.enqueue
	store.gap = sh.lastGap
	return sh, nil
}

// lastGap is the last time the connection was seen down or found to have
// reconnected: other replicas' ids published meanwhile were missed, so the
// table is not complete until a window has passed since.
func (sh *Share) lastGap(now time.Time) time.Time {
	sh.gapMu.Lock()
	defer sh.gapMu.Unlock()
	if r := sh.nc.Stats().Reconnects; r != sh.reconnects || !sh.nc.IsConnected() {
		sh.reconnects, sh.gapAt = r, now
	}
	return sh.gapAt
}

func (sh *Share) enqueue(pool, id, endpoint string, at time.Time) {
	select {
	case sh.out <- api.AffinityMessage{V: 1, Replica: sh.replica, Pool: pool, ID: id, Endpoint: endpoint, At: at.UnixNano()}:
	default:
		sh.store.metrics.shared.WithLabelValues("publish_error").Inc()
	}
}

// Start subscribes to the other replicas' ids and starts the publish loop
// until ctx ends or Close. It returns an error when it cannot subscribe.
func (sh *Share) Start(ctx context.Context) error {
	sub, err := sh.nc.Subscribe(api.AffinityWildcard, sh.receive)
	if err != nil {
		close(sh.done)
		return fmt.Errorf("subscribing to %s: %w", api.AffinityWildcard, err)
	}
	_ = sub.SetPendingLimits(-1, -1) // the handler only records into the store
	if err := sh.nc.Flush(); err != nil && sh.nc.IsConnected() {
		_ = sub.Unsubscribe()
		close(sh.done)
		return fmt.Errorf("subscribing to %s: %w", api.AffinityWildcard, err)
	}
	sh.sub = sub
	ctx, sh.cancel = context.WithCancel(ctx)
	if sh.replay != nil {
		// Subscribed first, so an id published while the replay runs
		// arrives live if the replay missed it.
		sh.replayDone = make(chan struct{})
		go func() {
			defer close(sh.replayDone)
			sh.catchUp(ctx)
		}()
	}
	go func() {
		defer close(sh.done)
		defer func() { _ = sub.Unsubscribe() }()
		sh.publishLoop(ctx)
	}()
	sh.log.Info("sharing response-id affinity with other replicas", "replica", sh.replica)
	return nil
}

func (sh *Share) publishLoop(ctx context.Context) {
	subjects := map[string]string{}
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-sh.out:
			sh.publish(subjects, &m)
		}
	}
}

func (sh *Share) publish(subjects map[string]string, m *api.AffinityMessage) {
	subj, ok := subjects[m.Pool]
	if !ok {
		var err error
		if subj, err = api.AffinitySubject(m.Pool, sh.replica); err != nil {
			sh.store.metrics.shared.WithLabelValues("publish_error").Inc()
			return
		}
		subjects[m.Pool] = subj
	}
	b, err := m.Marshal()
	if err == nil {
		err = sh.nc.Publish(subj, b)
	}
	if err != nil {
		sh.store.metrics.shared.WithLabelValues("publish_error").Inc()
		sh.log.Debug("publishing a response id failed", "err", err)
		return
	}
	sh.store.metrics.shared.WithLabelValues("published").Inc()
}

// receive is the NATS handler: it records another replica's id.
func (sh *Share) receive(msg *nats.Msg) {
	var m api.AffinityMessage
	if err := m.Unmarshal(msg.Data); err != nil {
		sh.store.metrics.shared.WithLabelValues("malformed").Inc()
		sh.log.Debug("dropping a malformed affinity message", "err", err)
		return
	}
	if m.Replica == sh.replica {
		sh.store.metrics.shared.WithLabelValues("own").Inc()
		return
	}
	if !sh.store.Remote(m.Pool, m.ID, m.Endpoint, m.Time()) {
		sh.store.metrics.shared.WithLabelValues("ignored").Inc()
		return
	}
	sh.store.metrics.shared.WithLabelValues("received").Inc()
}

// Close stops the publish loop and unsubscribes, waiting for both. It is
// idempotent and safe before Start.
func (sh *Share) Close() {
	sh.once.Do(func() {
		if sh.cancel == nil {
			select {
			case <-sh.done:
			default:
				close(sh.done)
			}
			return
		}
		sh.cancel()
		<-sh.done
		if sh.replayDone != nil {
			<-sh.replayDone
		}
	})
}
