package relay_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/vmihailenco/msgpack/v5"
	"github.com/warmroute/warmroute/internal/testwait"
)

// fakeEngine publishes KV event batches the way vLLM does, on go-zeromq
// sockets: a PUB socket sending [topic, seq, payload] and a ROUTER answering
// a DEALER's ["", start] with every buffered batch from start (new layout,
// with the topic frame) and then the end marker. Batch seq stores one block
// with hash 1000+seq and tokens seq*4 .. seq*4+3 (what checkPayload wants).
// It is safe for concurrent use.
type fakeEngine struct {
	t           testing.TB
	pub, router zmq4.Socket
	keep        int // buffer_steps: batches the replay buffer holds

	mu   sync.Mutex
	next uint64
	buf  []fakeBatch
	// beforeReply, when set, runs when a replay request arrives, before
	// the reply: what the engine does while a relay replays.
	beforeReply func()
	replays     atomic.Int32
	malformed   atomic.Bool // answer replay requests with a one-frame reply
	dpRank      int         // the data_parallel_rank its batches carry
	// payload, when set, makes batch seq's payload instead of fakeRankPayload.
	payload func(seq uint64) []byte
}

type fakeBatch struct {
	seq     uint64
	payload []byte
}

func startFakeEngine(t testing.TB, keep int) *fakeEngine {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	e := &fakeEngine{t: t, keep: keep, pub: zmq4.NewPub(ctx), router: zmq4.NewRouter(ctx)}
	if err := e.pub.Listen("tcp://127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	if err := e.router.Listen("tcp://127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); e.serve() }()
	t.Cleanup(func() { cancel(); _ = e.router.Close(); _ = e.pub.Close(); <-done })
	return e
}

func (e *fakeEngine) eventsURL() string { return "tcp://" + e.pub.Addr().String() }
func (e *fakeEngine) replayURL() string { return "tcp://" + e.router.Addr().String() }

// publish makes n batches; live sends them on PUB too, otherwise they only
// reach the replay buffer (as when the PUB's high-water mark drops them).
func (e *fakeEngine) publish(n int, live bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for range n {
		b := fakeBatch{seq: e.next, payload: fakeRankPayload(e.next, e.dpRank)}
		if e.payload != nil {
			b.payload = e.payload(e.next)
		}
		e.next++
		e.buf = append(e.buf, b)
		if len(e.buf) > e.keep {
			e.buf = e.buf[1:]
		}
		if live {
			if err := e.pub.Send(zmq4.NewMsgFrom([]byte("kv"), seqBytes(b.seq), b.payload)); err != nil {
				e.t.Errorf("publishing seq %d: %v", b.seq, err)
			}
		}
	}
}

// dropConnections closes the PUB socket and listens again on the same
// address, as an engine process that went away and came back does: every
// subscriber sees its connection fail and reconnects.
func (e *fakeEngine) dropConnections() {
	e.mu.Lock()
	defer e.mu.Unlock()
	addr := e.eventsURL()
	_ = e.pub.Close()
	e.pub = zmq4.NewPub(context.Background())
	e.t.Cleanup(func() { _ = e.pub.Close() })
	if err := e.pub.Listen(addr); err != nil {
		e.t.Fatalf("listening again on %s: %v", addr, err)
	}
}

// restart starts the sequence over with an empty buffer.
func (e *fakeEngine) restart() {
	e.mu.Lock()
	e.next, e.buf = 0, nil
	e.mu.Unlock()
}

func (e *fakeEngine) serve() {
	for {
		msg, err := e.router.Recv()
		if err != nil {
			return
		}
		if len(msg.Frames) != 3 || len(msg.Frames[2]) != 8 {
			continue
		}
		e.replays.Add(1)
		id, from := msg.Frames[0], binary.BigEndian.Uint64(msg.Frames[2])
		e.mu.Lock()
		hook := e.beforeReply
		e.mu.Unlock()
		if hook != nil {
			hook()
		}
		if e.malformed.Load() {
			_ = e.router.Send(zmq4.NewMsgFrom(id, nil, []byte("x")))
			continue
		}
		e.mu.Lock()
		var out []fakeBatch
		for _, b := range e.buf {
			if b.seq >= from {
				out = append(out, b)
			}
		}
		e.mu.Unlock()
		for _, b := range append(out, fakeBatch{seq: math.MaxUint64}) {
			if e.router.Send(zmq4.NewMsgFrom(id, nil, []byte("kv"), seqBytes(b.seq), b.payload)) != nil {
				break
			}
		}
	}
}

// waitReplays waits until the engine has received n replay requests.
func (e *fakeEngine) waitReplays(n int32) {
	e.t.Helper()
	testwait.Until(e.t, 10*time.Second, func() string {
		if got := e.replays.Load(); got < n {
			return fmt.Sprintf("engine got %d replay requests, want %d", got, n)
		}
		return ""
	})
}

func seqBytes(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

func fakePayload(seq uint64) []byte { return fakeRankPayload(seq, 0) }

func fakeRankPayload(seq uint64, rank int) []byte {
	toks := make([]uint64, 4)
	for i := range toks {
		toks[i] = seq*4 + uint64(i)
	}
	b, err := msgpack.Marshal([]any{float64(time.Now().UnixMicro()) / 1e6, []any{map[string]any{"type": "BlockStored",
		"block_hashes": []uint64{1000 + seq}, "parent_block_hash": nil, "token_ids": toks, "block_size": 4}}, rank})
	if err != nil {
		panic(err)
	}
	return b
}
