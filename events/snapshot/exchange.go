package snapshot

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// ErrorHeader carries a relay's refusal (for instance: the rank asked for
// is not the one it serves) on a reply without a body.
const ErrorHeader = "Warmroute-Snapshot-Error"

// Errors a Fetch can end with, besides ErrMalformed and the context's.
var (
	// ErrNoResponders: no relay answers the subject (an older relay without
	// a mirror, or none for that endpoint and rank).
	ErrNoResponders = errors.New("no relay answers snapshot requests")
	// ErrTimeout: the relay stopped sending before the last chunk (it died
	// or was cut off mid-snapshot).
	ErrTimeout = errors.New("snapshot chunk did not arrive in time")
	// ErrRefused: the relay answered with an error.
	ErrRefused = errors.New("relay refused the snapshot")
)

// Reply sends chunks to reply in order; the last must be marked Last.
func Reply(nc *nats.Conn, reply string, chunks [][]byte) error {
	for i, c := range chunks {
		if err := nc.Publish(reply, c); err != nil {
			return fmt.Errorf("sending snapshot chunk %d of %d: %w", i, len(chunks), err)
		}
	}
	return nil
}

// Refuse answers reply with an error instead of a snapshot.
func Refuse(nc *nats.Conn, reply, why string) error {
	m := &nats.Msg{Subject: reply, Header: nats.Header{ErrorHeader: {why}}}
	if err := nc.PublishMsg(m); err != nil {
		return fmt.Errorf("refusing snapshot request: %w", err)
	}
	return nil
}

// Fetch requests a snapshot on subject and hands each chunk, in order, to
// fn (the chunk is reused after fn returns). Each chunk must arrive within
// chunkTimeout of the previous one (or of the request), so a relay that
// dies mid-snapshot ends the fetch with ErrTimeout rather than hanging. It
// returns the header of the last chunk.
func Fetch(ctx context.Context, nc *nats.Conn, subject string, chunkTimeout time.Duration, fn func(*Chunk) error) (Header, error) {
	inbox := nc.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		return Header{}, fmt.Errorf("subscribing to snapshot inbox: %w", err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	// The relay sends chunks as fast as it can; hold them all client-side.
	_ = sub.SetPendingLimits(-1, -1)
	if err := nc.PublishMsg(&nats.Msg{Subject: subject, Reply: inbox}); err != nil {
		return Header{}, fmt.Errorf("requesting snapshot on %s: %w", subject, err)
	}
	var c Chunk
	var first Header
	for i := uint32(0); ; i++ {
		msg, err := next(ctx, sub, chunkTimeout)
		if err != nil {
			return Header{}, fmt.Errorf("reading snapshot chunk %d from %s: %w", i, subject, err)
		}
		if err := Decode(msg.Data, &c); err != nil {
			return Header{}, err
		}
		if i == 0 {
			first = c.Header
		}
		if c.Header.Index != i || c.Header.Epoch != first.Epoch || c.Header.Seq != first.Seq || c.Header.Total != first.Total {
			return Header{}, fmt.Errorf("snapshot chunk %d: got index %d, epoch %d, seq %d; want epoch %d, seq %d: %w",
				i, c.Header.Index, c.Header.Epoch, c.Header.Seq, first.Epoch, first.Seq, ErrMalformed)
		}
		if err := fn(&c); err != nil {
			return Header{}, err
		}
		if c.Header.Last {
			return c.Header, nil
		}
	}
}

// next waits for one reply message and turns NATS status and relay error
// replies into errors.
func next(ctx context.Context, sub *nats.Subscription, timeout time.Duration) (*nats.Msg, error) {
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	msg, err := sub.NextMsgWithContext(tctx)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, context.DeadlineExceeded):
		return nil, fmt.Errorf("after %s: %w", timeout, ErrTimeout)
	case errors.Is(err, nats.ErrNoResponders):
		return nil, ErrNoResponders
	case err != nil:
		return nil, err
	}
	if msg.Header.Get("Status") == "503" {
		return nil, ErrNoResponders
	}
	if why := msg.Header.Get(ErrorHeader); why != "" {
		return nil, fmt.Errorf("%s: %w", why, ErrRefused)
	}
	return msg, nil
}
