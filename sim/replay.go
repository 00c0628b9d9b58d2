package sim

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"github.com/go-zeromq/zmq4"
)

// replayEndSeq marks the end of a replay answer, as in vLLM.
const replayEndSeq = math.MaxUint64

// storedBatch is one published batch kept for replay; payload is never
// modified after encoding, so it is shared, not copied.
type storedBatch struct {
	seq     uint64
	payload []byte
}

// replayBuffer keeps the last cap batches (vLLM's buffer_steps). It is safe
// for concurrent use; the zero value is not usable, use newReplayBuffer.
type replayBuffer struct {
	mu    sync.Mutex
	ring  []storedBatch
	start int // index of the oldest entry
	n     int
}

func newReplayBuffer(capacity int) *replayBuffer {
	return &replayBuffer{ring: make([]storedBatch, capacity)}
}

func (r *replayBuffer) add(seq uint64, payload []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ring) == 0 {
		return
	}
	i := (r.start + r.n) % len(r.ring)
	r.ring[i] = storedBatch{seq, payload}
	if r.n < len(r.ring) {
		r.n++
		return
	}
	r.start = (r.start + 1) % len(r.ring)
}

// since returns every kept batch with seq >= from, oldest first.
func (r *replayBuffer) since(from uint64) []storedBatch {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []storedBatch
	for k := range r.n {
		b := r.ring[(r.start+k)%len(r.ring)]
		if b.seq >= from {
			out = append(out, b)
		}
	}
	return out
}

func (r *replayBuffer) clear() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.ring)
	r.start, r.n = 0, 0
}

// replayServer answers DEALER requests ["", start_seq] on a ROUTER socket
// with every buffered batch from start_seq on, in vLLM >= 0.26's layout
// ["", topic, seq, payload], then the end marker. Its goroutine is owned by
// run, which returns when the socket is closed.
type replayServer struct {
	sock    zmq4.Socket
	topic   []byte
	buf     *replayBuffer
	metrics *eventMetrics
}

func listenReplay(ctx context.Context, endpoint, topic string, buf *replayBuffer, m *eventMetrics) (*replayServer, error) {
	sock := zmq4.NewRouter(ctx, zmq4.WithLogger(zmqLogger))
	if err := sock.Listen(endpoint); err != nil {
		sock.Close()
		return nil, fmt.Errorf("listening: %w", err)
	}
	return &replayServer{sock: sock, topic: []byte(topic), buf: buf, metrics: m}, nil
}

func (s *replayServer) run() {
	for {
		msg, err := s.sock.Recv()
		if err != nil {
			return // closed
		}
		s.answer(msg.Frames)
	}
}

// answer replies to one request [identity, "", seq]; anything else is
// counted and ignored, since a ROUTER cannot answer a peer it cannot parse.
func (s *replayServer) answer(frames [][]byte) {
	if len(frames) < 2 || len(frames[len(frames)-1]) != 8 {
		s.metrics.replays.WithLabelValues("malformed").Inc()
		return
	}
	id, from := frames[0], binary.BigEndian.Uint64(frames[len(frames)-1])
	for _, b := range s.buf.since(from) {
		if s.send(id, b.seq, b.payload) != nil {
			s.metrics.replays.WithLabelValues("failed").Inc()
			return
		}
	}
	if s.send(id, replayEndSeq, []byte{}) != nil {
		s.metrics.replays.WithLabelValues("failed").Inc()
		return
	}
	s.metrics.replays.WithLabelValues("ok").Inc()
}

func (s *replayServer) send(id []byte, seq uint64, payload []byte) error {
	var sq [8]byte
	binary.BigEndian.PutUint64(sq[:], seq)
	return s.sock.Send(zmq4.NewMsgFrom(id, []byte{}, s.topic, sq[:], payload))
}
