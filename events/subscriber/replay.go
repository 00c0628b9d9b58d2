package subscriber

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/warmroute/warmroute/events/bus"
)

// ensureStream creates the stream before the replay. A failure is logged,
// not fatal: the replay then fails, is counted, and the router follows live
// events as it would without a stream.
func (s *Subscriber) ensureStream(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	js := s.cfg.JetStream
	if err := bus.EnsureStream(ctx, s.nc, bus.StreamConfig{Name: js.Stream, MaxAge: js.MaxAge.D()}); err != nil {
		s.log.Warn("event stream unavailable; starting from live events", "stream", js.Stream, "err", err)
	}
}

// replayStream applies every retained message of the followed models, in
// stream order, before the live loop starts on the queue. Live messages that
// arrived meanwhile wait in the queue; those already replayed are then
// dropped as duplicates by their sequence number, so nothing is applied twice
// and nothing between the stream's end and the live subscription is missed.
func (s *Subscriber) replayStream(ctx context.Context) (int, error) {
	return bus.Replay(ctx, s.nc, "event", s.cfg.JetStream.Stream, s.eventSubjects(), 4096, func(msg jetstream.Msg) {
		s.handle(inbound{msg: &nats.Msg{Subject: msg.Subject(), Header: msg.Headers(), Data: msg.Data()},
			at: s.now(), replayed: true})
	})
}
