package subscriber

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/warmroute/warmroute/api"
)

// Follow says which streams a Subscriber follows; serve derives it from its
// pools rather than from settings of its own.
type Follow struct {
	// Models are the model names whose streams this router follows.
	Models []string
	// AllModels follows every model's streams instead of Models, so that
	// discovery can learn models that configuration does not name.
	AllModels bool
	// Endpoints are the configured endpoints of each model (pool names and
	// aliases alike): the only ones event messages may speak for unless
	// Config.HeartbeatMembership admits others.
	Endpoints map[string][]string
	// Member, when set, also admits an endpoint that is a member of a
	// model's pool right now by another source of membership (a pool
	// following a Kubernetes InferencePool has no configured endpoints).
	// Called from the apply goroutine for every message: keep it cheap.
	Member func(model, endpoint string) bool
	// ReplayTimeout bounds the start-up replay (Config.JetStream); when it
	// runs out the router becomes ready with what it applied. Default 2m.
	ReplayTimeout time.Duration
}

// Subscriber follows the KV event streams of some models over NATS, checks
// each Source's sequence, applies batches in order to a Sink, and tracks
// freshness and membership.
//
// Create it with New, Start it once and Close it. Its query methods
// (Freshness, SourceFreshness, EndpointFreshness, EngineLoad, Backlog,
// Sources, Ready) are safe for concurrent use at any time, before Start
// too; the zero value is not usable.
type Subscriber struct {
	cfg     Config
	follow  Follow
	nc      *nats.Conn
	sink    Sink
	members Membership
	admit   admission
	metrics *subscriberMetrics
	log     *slog.Logger
	queue   chan inbound
	now     func() time.Time

	replay     *replayMetrics
	ready      chan struct{}
	cancel     context.CancelFunc
	done       chan struct{} // closed when the apply goroutine returned
	closeOnce  sync.Once
	lastReject time.Time // apply goroutine only
	// wait is how long the message handled last waited in queue, in
	// nanoseconds: the subscriber backlog the TTL's slack must cover.
	wait atomic.Int64

	mu         sync.RWMutex
	streams    map[Source]*streamState
	byEndpoint map[string]map[Source]struct{}
	// expiredDown holds endpoints whose streams all expired, until one of
	// them is heard again; down is the set Down reads (liveness.go).
	expiredDown map[string]struct{}
	down        atomic.Pointer[map[string]string]
	syncingEPs  atomic.Pointer[map[string]struct{}]

	// Snapshot sync (sync.go): replacer is the sink when it can take a
	// snapshot; fetches run on syncs and report on syncDone.
	replacer Replacer
	// onRestart hears each reset that says the engine restarted
	// (OnEngineRestart); nil hears nothing.
	onRestart   func(Source)
	syncs       sync.WaitGroup
	syncCtx     context.Context
	syncDone    chan syncResult
	reconnected chan struct{}
	syncSeq     uint64 // apply loop only

	// deafSince is when the router's own NATS connection was lost (unix
	// nanoseconds, 0 while connected) and heardBack when it last returned:
	// silence the router could not hear is not its relays' (expire).
	deafSince atomic.Int64
	heardBack atomic.Int64
}

// inbound is one NATS message handed from the handler to the apply loop.
type inbound struct {
	msg       *nats.Msg
	heartbeat bool
	at        time.Time
	replayed  bool // from the JetStream stream at start-up, not the live path
	// synced counts the successful syncs this message was held through
	// (holdDuringSync, finishSync); see staleEpochAfter.
	synced int
}

// New prepares a subscriber on nc; it follows nothing until Start. m comes
// from NewMetrics (nil: unregistered metrics); log may be nil.
func New(cfg Config, follow Follow, nc *nats.Conn, m *Metrics, log *slog.Logger) (*Subscriber, error) {
	if nc == nil || (len(follow.Models) == 0 && !follow.AllModels) {
		return nil, fmt.Errorf("creating subscriber: need a NATS connection and models: %w", ErrInvalidConfig)
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("creating subscriber: %w: %w", ErrInvalidConfig, err)
	}
	cfg = cfg.WithDefaults()
	follow.ReplayTimeout = cmp.Or(follow.ReplayTimeout, 2*time.Minute)
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if m == nil {
		m, _ = NewMetrics(nil) // nothing to register, so no error
	}
	s := &Subscriber{cfg: cfg, follow: follow, nc: nc, metrics: &m.sub, log: log,
		admit: newAdmission(cfg.HeartbeatMembership, follow.Endpoints, follow.Member),
		queue: make(chan inbound, cfg.QueueSize), now: time.Now, streams: map[Source]*streamState{},
		replay: &m.replay, ready: make(chan struct{}), done: make(chan struct{}),
		byEndpoint: map[string]map[Source]struct{}{}, syncDone: make(chan syncResult),
		reconnected: make(chan struct{}, 1)}
	m.fresh.s.CompareAndSwap(nil, s) // a registry exports one subscriber's sources
	return s, nil
}

// OnEngineRestart registers f to hear, on the apply loop, each endpoint
// whose relay declared a reset because the engine restarted (its sequence
// went backwards): whatever the engine held in memory, such as stored
// Responses responses, is gone. Call it before Start; f must not block.
func (s *Subscriber) OnEngineRestart(f func(src Source)) { s.onRestart = f }

// Start subscribes and starts the apply goroutine, which feeds sink and
// members (nil: no membership) until ctx ends or Close. With
// Config.JetStream enabled it first ensures the stream and replays it.
// It returns the subscription error, if any, and may be called once.
func (s *Subscriber) Start(ctx context.Context, sink Sink, members Membership) error {
	if sink == nil {
		return fmt.Errorf("starting subscriber: nil sink: %w", ErrInvalidConfig)
	}
	s.sink, s.members = sink, members
	s.replacer, _ = sink.(Replacer)
	subs, err := s.subscribe()
	if err != nil {
		unsubscribe(subs)
		return err
	}
	ctx, s.cancel = context.WithCancel(ctx)
	s.syncCtx = ctx
	s.syncs.Go(func() { s.watchReconnects(ctx) })
	go func() {
		defer close(s.done)
		defer s.syncs.Wait() // fetches end with ctx
		defer unsubscribe(subs)
		s.run(ctx)
	}()
	return nil
}

// Close stops the apply goroutine and waits for it; the caller then closes
// the NATS connection. It is idempotent and safe before Start.
func (s *Subscriber) Close() {
	s.closeOnce.Do(func() {
		if s.cancel == nil {
			close(s.done)
			return
		}
		s.cancel()
		<-s.done
	})
}

func unsubscribe(subs []*nats.Subscription) {
	for _, sub := range subs {
		_ = sub.Unsubscribe()
	}
}

// run replays the stream when configured, closes Ready, and applies live
// messages until ctx is done.
func (s *Subscriber) run(ctx context.Context) {
	s.catchUp(ctx)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case in := <-s.queue:
			s.metrics.queued.Set(float64(len(s.queue)))
			s.wait.Store(int64(s.now().Sub(in.at)))
			s.handle(in)
		case <-tick.C:
			s.expire()
		case res := <-s.syncDone:
			s.finishSync(res)
		case <-s.reconnected:
			s.syncAfterReconnect()
		}
	}
}

func (s *Subscriber) subscribe() ([]*nats.Subscription, error) {
	var subs []*nats.Subscription
	events, beats, err := s.subjects()
	if err != nil {
		return nil, err
	}
	for i, subj := range append(events, beats...) {
		isHB := i >= len(events)
		sub, err := s.nc.Subscribe(subj, func(msg *nats.Msg) { s.enqueue(msg, isHB) })
		if err != nil {
			return subs, fmt.Errorf("subscribing to %s: %w", subj, err)
		}
		// The handler never blocks, so the client-side limits only matter
		// if the apply loop stalls; make them generous.
		_ = sub.SetPendingLimits(-1, -1)
		subs = append(subs, sub)
	}
	// While NATS is unreachable the client resends subscriptions once it
	// reconnects, so only a connected client's failed flush is an error.
	if err := s.nc.Flush(); err != nil && s.nc.IsConnected() {
		return subs, fmt.Errorf("subscribing to kv events: %w", err)
	}
	return subs, nil
}

// subjects lists the event and heartbeat subjects this subscriber follows.
func (s *Subscriber) subjects() (events, beats []string, err error) {
	if s.follow.AllModels {
		return []string{api.EventSubjectPrefix + ".*.*"}, []string{api.HeartbeatSubjectPrefix + ".*.*"}, nil
	}
	for _, m := range s.follow.Models {
		ev, err := api.EventWildcard(m)
		if err != nil {
			return nil, nil, fmt.Errorf("subscribing to model %q: %w", m, err)
		}
		hb, _ := api.HeartbeatWildcard(m)
		events, beats = append(events, ev), append(beats, hb)
	}
	return events, beats, nil
}

// eventSubjects lists the event subjects, already validated by subscribe.
func (s *Subscriber) eventSubjects() []string {
	events, _, _ := s.subjects()
	return events
}

// Ready is closed once Start has subscribed and, when a replay stream is
// configured, replayed it (or given up, counted and logged), so the index
// holds what the stream retained before the router reports ready.
func (s *Subscriber) Ready() <-chan struct{} { return s.ready }

// Backlog is how long the message handled last had waited in the
// subscriber's queue. Safe for concurrent use.
func (s *Subscriber) Backlog() time.Duration { return time.Duration(s.wait.Load()) }

// catchUp replays the configured stream and then closes Ready. A failed
// replay does not stop the router: it serves from live events, as it would
// without a stream.
func (s *Subscriber) catchUp(ctx context.Context) {
	defer close(s.ready)
	if !s.cfg.JetStream.Enabled {
		return
	}
	s.ensureStream(ctx)
	start := time.Now()
	rctx, cancel := context.WithTimeout(ctx, s.follow.ReplayTimeout)
	defer cancel()
	n, err := s.replayStream(rctx)
	took := time.Since(start)
	s.replay.messages.Add(float64(n))
	s.replay.duration.Set(took.Seconds())
	if err != nil {
		s.replay.failures.Inc()
		s.log.Warn("event stream replay incomplete; following live events", "stream", s.cfg.JetStream.Stream,
			"messages", n, "err", err)
		return
	}
	s.log.Info("replayed event stream", "stream", s.cfg.JetStream.Stream, "messages", n, "took", took)
}

// enqueue is the NATS handler: it never blocks. A dropped event message
// surfaces later as a sequence gap, which clears the source.
func (s *Subscriber) enqueue(msg *nats.Msg, heartbeat bool) {
	select {
	case s.queue <- inbound{msg: msg, heartbeat: heartbeat, at: s.now()}:
	default:
		s.metrics.messages.WithLabelValues("overflow").Inc()
	}
}

// SourceFreshness reports what is known about src.
func (s *Subscriber) SourceFreshness(src Source) (Freshness, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st, ok := s.streams[src]
	if !ok {
		return Freshness{}, false
	}
	return st.fresh, true
}

// Sources lists the streams currently known, in no particular order.
func (s *Subscriber) Sources() []Source {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Source, 0, len(s.streams))
	for src := range s.streams {
		out = append(out, src)
	}
	return out
}
