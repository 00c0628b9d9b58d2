package events

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/api"
)

// SubscriberConfig configures the router side. Zero values mean defaults.
type SubscriberConfig struct {
	// Models are the model names whose streams this router follows.
	Models []string
	// QueueSize bounds messages between the NATS handler and the apply
	// loop; default 65536. Overflow is counted and shows up as a gap.
	QueueSize int
	// ExpireMisses is how many heartbeat intervals may pass without a
	// heartbeat or batch before a source is expired; default 3.
	ExpireMisses int
}

// Subscriber follows the KV event streams of some models over NATS, checks
// each Source's sequence, applies batches in order to a Sink, and tracks
// freshness and membership.
//
// Create it with NewSubscriber and call Run once. Freshness and Sources are
// safe for concurrent use while Run is going; the zero value is not usable.
type Subscriber struct {
	cfg     SubscriberConfig
	nc      *nats.Conn
	sink    Sink
	members Membership
	metrics *subscriberMetrics
	log     *slog.Logger
	queue   chan inbound
	now     func() time.Time

	mu      sync.RWMutex
	streams map[Source]*streamState
}

// inbound is one NATS message handed from the handler to the apply loop.
type inbound struct {
	msg       *nats.Msg
	heartbeat bool
	at        time.Time
}

// NewSubscriber prepares a subscriber. members may be nil; metrics go to reg
// (nil: not registered); log may be nil.
func NewSubscriber(cfg SubscriberConfig, nc *nats.Conn, sink Sink, members Membership,
	reg prometheus.Registerer, log *slog.Logger) (*Subscriber, error) {
	if nc == nil || sink == nil || len(cfg.Models) == 0 {
		return nil, fmt.Errorf("creating subscriber: need a NATS connection, a sink and models: %w", ErrInvalidConfig)
	}
	setDefault(&cfg.QueueSize, 65536)
	setDefault(&cfg.ExpireMisses, 3)
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Subscriber{cfg: cfg, nc: nc, sink: sink, members: members, metrics: newSubscriberMetrics(reg),
		log: log, queue: make(chan inbound, cfg.QueueSize), now: time.Now, streams: map[Source]*streamState{}}
	if reg != nil {
		_ = reg.Register(freshnessCollector{s}) // a second subscriber on one registry is not exported twice
	}
	return s, nil
}

// Run subscribes and applies messages until ctx is done, then unsubscribes.
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
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case in := <-s.queue:
			s.metrics.queued.Set(float64(len(s.queue)))
			s.handle(in)
		case <-tick.C:
			s.expire()
		}
	}
}

func (s *Subscriber) subscribe() ([]*nats.Subscription, error) {
	var subs []*nats.Subscription
	for _, m := range s.cfg.Models {
		ev, err := api.EventWildcard(m)
		if err != nil {
			return subs, fmt.Errorf("subscribing to model %q: %w", m, err)
		}
		hb, _ := api.HeartbeatWildcard(m)
		for _, subj := range []string{ev, hb} {
			isHB := subj == hb
			sub, err := s.nc.Subscribe(subj, func(msg *nats.Msg) { s.enqueue(msg, isHB) })
			if err != nil {
				return subs, fmt.Errorf("subscribing to %s: %w", subj, err)
			}
			// The handler never blocks, so the client-side limits only matter
			// if the apply loop stalls; make them generous.
			_ = sub.SetPendingLimits(-1, -1)
			subs = append(subs, sub)
		}
	}
	return subs, s.nc.Flush()
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
