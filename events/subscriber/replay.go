package subscriber

import (
	"context"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/warmroute/warmroute/events/bus"
)

// replayStream applies every retained message of the followed models, in
// stream order, before Run starts on the live queue. Live messages that
// arrived meanwhile wait in the queue; those already replayed are then
// dropped as duplicates by their sequence number, so nothing is applied twice
// and nothing between the stream's end and the live subscription is missed.
func (s *Subscriber) replayStream(ctx context.Context) (int, error) {
	return bus.Replay(ctx, s.nc, "event", s.cfg.ReplayStream, s.eventSubjects(), 4096, func(msg jetstream.Msg) {
		s.handle(inbound{msg: &nats.Msg{Subject: msg.Subject(), Header: msg.Headers(), Data: msg.Data()},
			at: s.now(), replayed: true})
	})
}

