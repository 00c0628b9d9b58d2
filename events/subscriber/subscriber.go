package subscriber

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/api"
)

// SubscriberConfig configures the router side. Zero values mean defaults.
type Config struct {
	// Models are the model names whose streams this router follows.
	Models []string
	// QueueSize bounds messages between the NATS handler and the apply
	// loop; default 65536. Overflow is counted and shows up as a gap.
	QueueSize int
	// ExpireMisses is how many heartbeat intervals may pass without a
	// heartbeat or batch before a source is expired; default 3.
	ExpireMisses int
	// AllModels follows every model's streams instead of Models, so that
	// discovery can learn models that configuration does not name.
	AllModels bool
	// ReplayStream names a JetStream stream (see EnsureStream) to replay
	// before Ready closes; empty follows live events only.
	ReplayStream string
	// ReplayTimeout bounds the start-up replay; when it runs out the router
	// becomes ready with what it applied. Default 2m.
	ReplayTimeout time.Duration
}

// Subscriber follows the KV event streams of some models over NATS, checks
// each Source's sequence, applies batches in order to a Sink, and tracks
// freshness and membership.
//
// Create it with NewSubscriber and call Run once. Freshness and Sources are
// safe for concurrent use while Run is going; the zero value is not usable.
type Subscriber struct {
	cfg     Config
	nc      *nats.Conn
	sink    Sink
	members Membership
	metrics *subscriberMetrics
	log     *slog.Logger
	queue   chan inbound
	now     func() time.Time

	replay *replayMetrics
	ready  chan struct{}
	// wait is how long the message handled last waited in queue, in
	// nanoseconds: the subscriber backlog the TTL's slack must cover.
	wait atomic.Int64

	mu         sync.RWMutex
	streams    map[Source]*streamState
	byEndpoint map[string]map[Source]struct{}
}

// inbound is one NATS message handed from the handler to the apply loop.
type inbound struct {
	msg       *nats.Msg
	heartbeat bool
	at        time.Time
	replayed  bool // from the JetStream stream at start-up, not the live path
}

// NewSubscriber prepares a subscriber. members may be nil; metrics go to reg
// (nil: not registered); log may be nil.
func New(cfg Config, nc *nats.Conn, sink Sink, members Membership,
	reg prometheus.Registerer, log *slog.Logger) (*Subscriber, error) {
	if nc == nil || sink == nil || (len(cfg.Models) == 0 && !cfg.AllModels) {
		return nil, fmt.Errorf("creating subscriber: need a NATS connection, a sink and models: %w", ErrInvalidConfig)
	}
	setDefault(&cfg.QueueSize, 65536)
	setDefault(&cfg.ExpireMisses, 3)
	setDefault(&cfg.ReplayTimeout, 2*time.Minute)
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Subscriber{cfg: cfg, nc: nc, sink: sink, members: members, metrics: newSubscriberMetrics(reg),
		log: log, queue: make(chan inbound, cfg.QueueSize), now: time.Now, streams: map[Source]*streamState{},
		replay: newReplayMetrics(reg), ready: make(chan struct{}), byEndpoint: map[string]map[Source]struct{}{}}
	if reg != nil {
		_ = reg.Register(freshnessCollector{s}) // a second subscriber on one registry is not exported twice
	}
	return s, nil
}

// Run subscribes, replays the stream when configured, closes Ready, and
// applies live messages until ctx is done, then unsubscribes.
func (s *Subscriber) Run(ctx context.Context) error {
	subs, err := s.subscribe()
	defer func() {
		for _, sub := range subs {
			_ = sub.Unsubscribe()
		}
	}()
	if err != nil {
		return err
	}
	s.catchUp(ctx)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case in := <-s.queue:
			s.metrics.queued.Set(float64(len(s.queue)))
			s.wait.Store(int64(s.now().Sub(in.at)))
			s.handle(in)
		case <-tick.C:
			s.expire()
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
	if s.cfg.AllModels {
		return []string{api.EventSubjectPrefix + ".*.*"}, []string{api.HeartbeatSubjectPrefix + ".*.*"}, nil
	}
	for _, m := range s.cfg.Models {
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

// Ready is closed once Run has subscribed and, when a replay stream is
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
	if s.cfg.ReplayStream == "" {
		return
	}
	start := time.Now()
	rctx, cancel := context.WithTimeout(ctx, s.cfg.ReplayTimeout)
	defer cancel()
	n, err := s.replayStream(rctx)
	took := time.Since(start)
	s.replay.messages.Add(float64(n))
	s.replay.duration.Set(took.Seconds())
	if err != nil {
		s.replay.failures.Inc()
		s.log.Warn("event stream replay incomplete; following live events", "stream", s.cfg.ReplayStream,
			"messages", n, "err", err)
		return
	}
	s.log.Info("replayed event stream", "stream", s.cfg.ReplayStream, "messages", n, "took", took)
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

// Freshness reports what is known about src.
func (s *Subscriber) Freshness(src Source) (Freshness, bool) {
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
