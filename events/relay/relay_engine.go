package relay

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log"
	"strconv"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/go-zeromq/zmq4"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/wire"
)

// zmqLog silences zmq4's own logger; the relay logs what matters itself.
var zmqLog = log.New(io.Discard, "", 0)

// engineLoop keeps a SUB socket to the engine open, reconnecting with backoff,
// and handles every batch until ctx is done.
func (r *Relay) engineLoop(ctx context.Context) {
	var st seqTracker
	var b wire.Batch
	bo := newBackoff(r.cfg.BackoffMin, r.cfg.BackoffMax)
	hadConnection := false
	for ctx.Err() == nil {
		sock, err := r.openEvents(ctx)
		if err != nil {
			if !r.cfg.ListenEvents && hadConnection {
				// The engine was there and nothing accepts the dial now: known
				// down. Before the first connection it may still be starting,
				// which is unknown, not down.
				r.setSocket(false)
			}
			r.log.Warn("connecting to engine events socket", "err", err)
			sleep(ctx, bo.next())
			continue
		}
		if hadConnection {
			r.metrics.reconnects.Inc()
		}
		r.holdSocket(sock)
		if !r.cfg.ListenEvents {
			r.setSocket(true) // a dial reached the engine; a bound socket proves nothing
		}
		err = r.receive(ctx, sock, &st, &b, hadConnection, &bo)
		hadConnection = true
		r.holdSocket(nil)
		_ = sock.Close()
		if r.socketClosedOnPurpose() {
			// A recheck keeps what was proven until it says otherwise, and
			// opens the socket again at once: a listening relay that waited
			// out a backoff would leave the engine nothing to connect to.
			r.log.Debug("engine events socket closed for a recheck")
			continue
		}
		r.setSocket(false)
		if ctx.Err() == nil {
			r.log.Warn("engine events socket failed; reconnecting", "err", err)
			sleep(ctx, bo.next())
		}
	}
}

func (r *Relay) openEvents(ctx context.Context) (zmq4.Socket, error) {
	sock := zmq4.NewSub(ctx, zmq4.WithDialerMaxRetries(0), zmq4.WithLogger(zmqLog))
	var err error
	if r.cfg.ListenEvents {
		err = sock.Listen(r.cfg.EventsEndpoint)
	} else {
		err = sock.Dial(r.cfg.EventsEndpoint)
	}
	if err == nil {
		err = sock.SetOption(zmq4.OptionSubscribe, r.cfg.Topic)
	}
	if err != nil {
		_ = sock.Close()
		return nil, fmt.Errorf("opening engine events socket %s: %w", r.cfg.EventsEndpoint, err)
	}
	return sock, nil
}

// receive handles batches until the socket fails. When the relay does not
// know the engine's sequence yet (start-up, or no batch seen before a
// reconnect) it first republishes the engine's replay buffer (resync); the
// socket is already subscribed, so live batches wait for it there. After a
// reconnect the first batch must continue the sequence exactly (see
// api.ResetReconnect), or the stream starts over.
func (r *Relay) receive(ctx context.Context, sock zmq4.Socket, st *seqTracker, b *wire.Batch, reconnected bool, bo *backoff) error {
	switch {
	case !st.started && r.cfg.ReplayEndpoint != "":
		r.resync(ctx, st, b, "")
	case reconnected && st.started && r.cfg.ReplayEndpoint != "":
		// The engine may have restarted while the socket was down, and an
		// idle restarted engine sends nothing that would show it: check now.
		if !r.continues(ctx, st, b) {
			r.resync(ctx, st, b, api.ResetReconnect)
		}
		reconnected = false
	}
	for {
		msg, err := sock.Recv()
		if err != nil {
			return fmt.Errorf("receiving engine batch: %w", err)
		}
		bo.reset()
		r.setSocket(true) // a frame from the engine
		now := time.Now()
		if len(msg.Frames) != 3 || len(msg.Frames[1]) != 8 {
			r.metrics.batches.WithLabelValues("malformed_frame").Inc()
			r.log.Warn("engine message is not [topic, 8-byte seq, payload]", "frames", len(msg.Frames))
			continue
		}
		seq := binary.BigEndian.Uint64(msg.Frames[1])
		if reconnected && st.started && st.classify(seq) != verdictNext {
			r.startOver(ctx, st, b, api.ResetReconnect, seq)
		}
		reconnected = false
		r.handleLive(ctx, st, b, seq, msg.Frames[2], now)
	}
}

// handleLive forwards one live batch, first repairing the stream when it
// does not continue: a gap is filled from the replay socket, a sequence that
// went backwards (engine restart) starts the stream over.
func (r *Relay) handleLive(ctx context.Context, st *seqTracker, b *wire.Batch, seq uint64, payload []byte, now time.Time) {
	if st.classifyLive(seq, xxhash.Sum64(payload)) == verdictBackwards {
		r.log.Warn("engine sequence went backwards; starting the endpoint's stream over", "seq", seq, "expected", st.next())
		r.startOver(ctx, st, b, api.ResetRestart, seq)
	}
	// After startOver everything up to the buffer's end counts as replayed,
	// so the live batch is now a duplicate, the next one, or past a gap.
	if st.classify(seq) == verdictGap {
		r.fillGap(ctx, st, b, seq)
	}
	if st.classify(seq) == verdictDuplicate {
		r.metrics.batches.WithLabelValues("duplicate").Inc()
		return
	}
	r.forward(st, b, seq, payload, now, "forwarded")
}

// forward queues one batch for NATS and records it as the stream's last.
func (r *Relay) forward(st *seqTracker, b *wire.Batch, seq uint64, payload []byte, now time.Time, result string) {
	st.accept(seq)
	st.lastSum = xxhash.Sum64(payload)
	if result == "replayed" {
		st.noteReplayed(seq, st.lastSum)
	}
	r.lastSeq.Store(seq)
	r.haveSeq.Store(true)
	// The payload is forwarded unchanged either way; decoding here only
	// surfaces engine/relay format mismatches in the relay's own metrics.
	if err := wire.DecodeBatch(payload, b); err != nil {
		r.metrics.decodeErrors.Inc()
		r.log.Debug("engine payload does not decode", "seq", seq, "err", err)
		r.mirrorApply(seq, nil)
	} else {
		if b.HasDPRank {
			r.adoptRank(b.DPRank)
		}
		r.mirrorApply(seq, b)
	}
	r.metrics.batches.WithLabelValues(result).Inc()
	r.out.push(outboxItem{msg: r.batchMsg(seq, payload), seq: seq, batch: true, received: now})
}

// reset queues an endpoint reset; the stream resumes at seq.
func (r *Relay) reset(st *seqTracker, reason api.ResetReason, seq uint64) {
	*st = seqTracker{}
	// Heartbeats name no last sequence until the new stream forwards one:
	// the old stream's last would read as a batch routers never got.
	r.haveSeq.Store(false)
	if r.mirror != nil {
		r.mirror.reset()
	}
	r.metrics.resets.WithLabelValues(string(reason)).Inc()
	r.out.push(outboxItem{msg: r.resetMsg(reason, seq), seq: seq})
}

// fillGap asks the engine's replay socket for everything from the next
// expected sequence on. Anything it cannot recover becomes a reset.
func (r *Relay) fillGap(ctx context.Context, st *seqTracker, b *wire.Batch, liveSeq uint64) {
	from := st.next()
	if r.cfg.ReplayEndpoint == "" {
		r.metrics.gaps.WithLabelValues("unrecoverable").Inc()
		r.reset(st, api.ResetGap, liveSeq)
		return
	}
	filled, err := r.replayInto(ctx, st, b, from)
	if err != nil {
		r.log.Warn("replaying missed engine batches", "from", from, "err", err)
	}
	switch st.classify(liveSeq) {
	case verdictDuplicate, verdictNext: // the replay reached the live batch
	default:
		r.reset(st, api.ResetGap, liveSeq)
		filled = false
	}
	if filled {
		r.metrics.gaps.WithLabelValues("replayed").Inc()
	} else {
		r.metrics.gaps.WithLabelValues("unrecoverable").Inc()
	}
}

// adoptRank publishes under the data-parallel rank the engine's payload
// names when it differs from the configured one: two relays of one endpoint
// left at --dp-rank's default would otherwise share a stream and reset each
// other. The disagreement is logged and counted.
func (r *Relay) adoptRank(rank int) {
	if int64(rank) == r.rank.Load() || rank < 0 || rank > maxDPRank {
		return
	}
	r.log.Warn("engine batches name another data-parallel rank than --dp-rank; publishing under the engine's",
		"configured", r.rank.Load(), "engine", rank)
	r.metrics.rankMismatch.Inc()
	r.setRank(rank)
}

// maxDPRank is the highest rank the index keys (one byte).
const maxDPRank = 255

func (r *Relay) setRank(rank int) {
	text := strconv.Itoa(rank)
	r.rank.Store(int64(rank))
	r.rankText.Store(&text)
}
