package relay

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/go-zeromq/zmq4"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/wire"
)

// replayEnd is the sequence number of the engine's end-of-replay marker.
const replayEnd = math.MaxUint64

// replayInto fetches batches from seq `from` on and forwards those that
// continue the stream. filled reports that the replay started exactly at
// from; when it started later, the hole is announced with a reset first.
func (r *Relay) replayInto(ctx context.Context, st *seqTracker, b *wire.Batch, from uint64) (filled bool, err error) {
	first, last, got := true, uint64(0), false
	err = r.fetchReplay(ctx, from, func(seq uint64, payload []byte) {
		if first {
			first, filled = false, seq == from
			if seq != from {
				r.reset(st, api.ResetGap, seq)
			}
		}
		if st.classify(seq) != verdictNext {
			return
		}
		r.forward(st, b, seq, payload, time.Now(), "replayed")
		last, got = seq, true
	})
	if got {
		st.markReplayed(from, last)
	}
	return filled && got, err
}

// fetchReplay runs one replay exchange on a fresh DEALER socket: request
// [empty, from as 8-byte big-endian], then read replies until the end marker.
func (r *Relay) fetchReplay(ctx context.Context, from uint64, fn func(seq uint64, payload []byte)) error {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.ReplayTimeout)
	defer cancel()
	d := zmq4.NewDealer(ctx, zmq4.WithDialerMaxRetries(0), zmq4.WithLogger(zmqLog))
	defer d.Close()
	if err := d.Dial(r.cfg.ReplayEndpoint); err != nil {
		return fmt.Errorf("dialing replay socket: %w: %w", ErrReplayUnavailable, err)
	}
	var req [8]byte
	binary.BigEndian.PutUint64(req[:], from)
	if err := d.Send(zmq4.NewMsgFrom([]byte{}, req[:])); err != nil {
		return fmt.Errorf("sending replay request: %w: %w", ErrReplayUnavailable, err)
	}
	for {
		msg, err := d.Recv()
		if err != nil {
			return fmt.Errorf("receiving replay: %w: %w", ErrReplayUnavailable, err)
		}
		seq, payload, err := parseReplayFrames(msg.Frames)
		if err != nil {
			return err
		}
		if seq == replayEnd {
			r.setSocket(true) // the engine's replay socket answered in full
			return nil
		}
		fn(seq, payload)
	}
}

// parseReplayFrames accepts both reply layouts as a DEALER sees them:
// vLLM >= 0.26 ["", topic, seq, payload] and older vLLM and SGLang
// ["", seq, payload]. The leading empty delimiter is optional.
func parseReplayFrames(frames [][]byte) (seq uint64, payload []byte, err error) {
	if len(frames) >= 3 && len(frames[0]) == 0 {
		frames = frames[1:]
	}
	switch len(frames) {
	case 2: // [seq, payload]
	case 3: // [topic, seq, payload]
		frames = frames[1:]
	default:
		return 0, nil, fmt.Errorf("parsing replay reply: %d frames: %w", len(frames), wire.ErrMalformed)
	}
	if len(frames[0]) != 8 {
		return 0, nil, fmt.Errorf("parsing replay reply: seq frame has %d bytes, want 8: %w", len(frames[0]), wire.ErrMalformed)
	}
	return binary.BigEndian.Uint64(frames[0]), frames[1], nil
}
