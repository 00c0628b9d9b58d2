package bus

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Replay hands every message the JetStream stream name retains on
// subjects to apply, in order, until none is pending, and returns how many
// it handed over. It is the one replay loop behind both the event stream
// (rebuilding the index at start-up) and the prediction stream (recovering
// predictions still live). what names the stream's role in errors.
func Replay(ctx context.Context, nc *nats.Conn, what, name string, subjects []string, batch int,
	apply func(jetstream.Msg)) (int, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return 0, fmt.Errorf("replaying %s stream: %w", what, err)
	}
	stream, err := js.Stream(ctx, name)
	if err != nil {
		return 0, fmt.Errorf("replaying %s stream %s: %w", what, name, err)
	}
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects: subjects, DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		return 0, fmt.Errorf("replaying %s stream %s: creating consumer: %w", what, name, err)
	}
	if cons.CachedInfo().NumPending == 0 {
		return 0, nil
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(batch))
	if err != nil {
		return 0, fmt.Errorf("replaying %s stream %s: %w", what, name, err)
	}
	defer it.Stop()
	for n := 0; ; {
		msg, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			return n, fmt.Errorf("replaying %s stream %s after %d messages: %w", what, name, n, err)
		}
		apply(msg)
		n++
		if md, err := msg.Metadata(); err != nil || md.NumPending == 0 {
			return n, nil
		}
	}
}
