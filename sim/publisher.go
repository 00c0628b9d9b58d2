package sim

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zeromq/zmq4"
)

// zmqLogger silences zmq4's own logging; failures surface as errors.
var zmqLogger = log.New(io.Discard, "", 0)

// frameSender delivers one batch as [topic, seq, payload].
type frameSender interface {
	send(seq uint64, payload []byte) error
}

// zmqPub is a ZMQ PUB socket bound to the events endpoint.
type zmqPub struct {
	sock  zmq4.Socket
	topic []byte
}

func (z *zmqPub) send(seq uint64, payload []byte) error {
	var sq [8]byte
	binary.BigEndian.PutUint64(sq[:], seq)
	return z.sock.Send(zmq4.NewMsgFrom(z.topic, sq[:], payload))
}

// faults are the delivery faults injected between the engine and the wire.
type faults struct {
	delay, jitter time.Duration
	dropRate      float64
}

// pending is a batch waiting for its delivery time.
type pending struct {
	seq     uint64
	epoch   uint64
	due     time.Time
	payload []byte
}

// publisher numbers, buffers and delivers KV event batches like vLLM's ZMQ
// publisher, with injectable delay, loss and a pause switch in between.
// publish never blocks: a full delivery queue drops the batch (a seq gap),
// as a PUB socket at its high-water mark does. It is safe for concurrent
// use; the zero value is not usable. Its delivery goroutine is owned by
// run; close stops it.
type publisher struct {
	out     frameSender
	format  EventFormat
	dpRank  int
	faults  faults
	replay  *replayBuffer
	metrics *eventMetrics
	paused  atomic.Bool
	queue   chan pending

	mu      sync.Mutex // seq, epoch, lastDue, rng and enqueue order
	seq     uint64
	epoch   uint64
	lastDue time.Time
	rng     *rand.Rand
}

// deliveryQueue bounds batches in flight (vLLM's max_queue_size).
const deliveryQueue = 100000

func newPublisher(out frameSender, format EventFormat, dpRank int, f faults, buf *replayBuffer, m *eventMetrics, seed uint64) *publisher {
	return &publisher{out: out, format: format, dpRank: dpRank, faults: f, replay: buf, metrics: m,
		queue: make(chan pending, deliveryQueue), rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// publish numbers and encodes one step's events and queues them for
// delivery. The batch enters the replay buffer even when the injected loss
// drops it, as vLLM buffers every batch whatever happens on the wire.
func (p *publisher) publish(evs []kvEvent) {
	now := time.Now()
	ts := float64(now.UnixNano()) / 1e9
	p.mu.Lock()
	defer p.mu.Unlock()
	seq := p.seq
	p.seq++
	payload := encodeBatch(nil, ts, evs, p.dpRank, p.format)
	p.replay.add(seq, payload)
	if p.faults.dropRate > 0 && p.rng.Float64() < p.faults.dropRate {
		p.metrics.batches.WithLabelValues("dropped_injected").Inc()
		return
	}
	due := now.Add(p.faults.delay)
	if p.faults.jitter > 0 {
		due = due.Add(time.Duration(p.rng.Int64N(int64(p.faults.jitter) + 1)))
	}
	if due.Before(p.lastDue) {
		due = p.lastDue // jitter must not reorder: the wire is FIFO
	}
	p.lastDue = due
	select {
	case p.queue <- pending{seq: seq, epoch: p.epoch, due: due, payload: payload}:
	default:
		p.metrics.batches.WithLabelValues("dropped_overflow").Inc()
	}
}

// restart forgets everything a process restart loses: the sequence starts
// at 0 again, the replay buffer empties and batches still in flight vanish.
func (p *publisher) restart() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq, p.lastDue = 0, time.Time{}
	p.epoch++
	p.replay.clear()
}

func (p *publisher) currentEpoch() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.epoch
}

// run delivers queued batches in order, each at its due time, until ctx
// ends.
func (p *publisher) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case b := <-p.queue:
			if sleep(ctx, time.Until(b.due)) != nil {
				return
			}
			p.deliver(b)
		}
	}
}

func (p *publisher) deliver(b pending) {
	switch {
	case b.epoch != p.currentEpoch():
		p.metrics.batches.WithLabelValues("dropped_restart").Inc()
	case p.paused.Load():
		p.metrics.batches.WithLabelValues("dropped_paused").Inc()
	case p.out.send(b.seq, b.payload) != nil:
		p.metrics.batches.WithLabelValues("send_failed").Inc()
	default:
		p.metrics.batches.WithLabelValues("published").Inc()
	}
}

// eventEndpoints owns the ZMQ sockets and the goroutines serving them.
type eventEndpoints struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	socks  []zmq4.Socket
}

func (e *eventEndpoints) close() {
	e.cancel()
	for _, s := range e.socks {
		s.Close()
	}
	e.wg.Wait()
}

func (e *eventEndpoints) goRun(f func()) {
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		f()
	}()
}

// listenPub binds the PUB socket.
func listenPub(ctx context.Context, endpoint, topic string) (*zmqPub, error) {
	sock := zmq4.NewPub(ctx, zmq4.WithLogger(zmqLogger))
	if err := sock.Listen(endpoint); err != nil {
		sock.Close()
		return nil, fmt.Errorf("listening: %w", err)
	}
	return &zmqPub{sock: sock, topic: []byte(topic)}, nil
}
