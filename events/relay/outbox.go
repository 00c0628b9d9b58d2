package relay

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/warmroute/warmroute/api"
)

// outboxItem is one message waiting for NATS.
type outboxItem struct {
	msg      *nats.Msg
	seq      uint64
	batch    bool      // an engine batch (not a reset)
	received time.Time // when the batch arrived from the engine
	id       uint64    // assigned by push, so pop removes the item it published
}

// outbox is the bounded FIFO between the engine loop and NATS. When full it
// drops the oldest message and counts it, so the publisher
// announces an explicit reset before the next batch instead of letting
// routers apply a stream with a hole in it.
//
// It is safe for concurrent use by one producer and one consumer.
type outbox struct {
	mu      sync.Mutex
	items   []outboxItem // ring buffer
	head    int
	n       int
	nextID  uint64
	drops   uint64 // messages dropped so far
	told    uint64 // drops already announced with a reset
	notify  chan struct{}
	metrics *Metrics
}

func newOutbox(size int, m *Metrics) *outbox {
	return &outbox{items: make([]outboxItem, max(size, 1)), notify: make(chan struct{}, 1), metrics: m}
}

func (o *outbox) push(it outboxItem) {
	o.mu.Lock()
	if o.n == len(o.items) {
		o.head = (o.head + 1) % len(o.items)
		o.n--
		o.drops++
		o.metrics.bufferDropped.Inc()
	}
	o.nextID++
	it.id = o.nextID
	o.items[(o.head+o.n)%len(o.items)] = it
	o.n++
	o.metrics.buffered.Set(float64(o.n))
	o.mu.Unlock()
	select {
	case o.notify <- struct{}{}:
	default:
	}
}

// peek returns the oldest item and the drop count so far; drops differing
// from the announced count means a reset is owed before the item.
func (o *outbox) peek() (it outboxItem, drops uint64, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n == 0 {
		return outboxItem{}, 0, false
	}
	return o.items[o.head], o.drops, true
}

// owesReset reports whether drops seen by peek have not been announced.
func (o *outbox) owesReset(drops uint64) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return drops != o.told
}

// announced records that a reset covering drops was published.
func (o *outbox) announced(drops uint64) {
	o.mu.Lock()
	o.told = drops
	o.mu.Unlock()
}

// pop removes item id after it was published, unless a concurrent push
// already dropped it to make room.
func (o *outbox) pop(id uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n == 0 || o.items[o.head].id != id {
		return
	}
	o.items[o.head] = outboxItem{}
	o.head = (o.head + 1) % len(o.items)
	o.n--
	o.metrics.buffered.Set(float64(o.n))
}

// publishLoop drains the outbox to NATS in order. A failed publish (NATS
// away; the connection has no reconnect buffer of its own, see ConnectOptions)
// is retried with backoff while the outbox absorbs new messages.
func (r *Relay) publishLoop(ctx context.Context) error {
	bo := newBackoff(r.cfg.BackoffMin, r.cfg.BackoffMax)
	for {
		it, drops, ok := r.out.peek()
		if !ok {
			select {
			case <-ctx.Done():
				return nil
			case <-r.out.notify:
				continue
			}
		}
		err := r.publishItem(it, drops)
		if errors.Is(err, nats.ErrConnectionClosed) {
			return fmt.Errorf("publishing kv events: %w", r.closedError())
		}
		if err != nil {
			r.metrics.publishErrors.Inc()
			if !sleep(ctx, bo.next()) {
				return nil
			}
			continue
		}
		bo.reset()
		r.out.pop(it.id)
	}
}

func (r *Relay) publishItem(it outboxItem, drops uint64) error {
	if it.batch && r.out.owesReset(drops) {
		if err := r.nc.PublishMsg(r.resetMsg(api.ResetOverflow, it.seq)); err != nil {
			return err
		}
		r.metrics.resets.WithLabelValues(string(api.ResetOverflow)).Inc()
		r.log.Warn("relay buffer overflowed while NATS was away; published endpoint reset")
		r.out.announced(drops)
	}
	if err := r.nc.PublishMsg(it.msg); err != nil {
		return err
	}
	if it.batch {
		r.metrics.forwardDelay.Observe(time.Since(it.received).Seconds())
	}
	return nil
}
