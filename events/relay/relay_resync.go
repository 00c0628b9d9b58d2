package relay

import (
	"context"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/wire"
)

// resyncOutcome labels relay_resyncs_total.
type resyncOutcome string

const (
	// resyncComplete: the engine's buffer reached back to seq 0 and was
	// republished, so routers hold the engine's whole state again.
	resyncComplete resyncOutcome = "complete"
	// resyncEmpty: the engine has published nothing yet; the stream must
	// start at seq 0.
	resyncEmpty resyncOutcome = "empty"
	// resyncPartial: the buffer starts after seq 0 (more than the engine's
	// buffer_steps batches were published), so earlier state is unknowable:
	// a reset, then what the buffer holds.
	resyncPartial resyncOutcome = "partial"
	// resyncFailed: the replay socket gave nothing usable.
	resyncFailed resyncOutcome = "failed"
)

// resync reads the engine's replay buffer from seq 0 and forwards it, so a
// relay that does not know where the engine's stream stands (it just started,
// or the engine's sequence started over) rebuilds routers' view of the
// endpoint instead of leaving out everything cached before it looked.
//
// reason is empty at start-up: the republished seq-0 batch then carries
// api.EventStreamStartHeader, which tells routers to drop what they hold for
// the Source (the relay cannot know what that is; a clean predecessor's
// leaving heartbeat already cleared it). Otherwise a reset with reason and
// seq 0 goes first. When the buffer no longer reaches seq 0 a reset at its
// first seq goes first instead (api.ResetGap at start-up). Live batches
// queue in the events socket meanwhile; those the replay covered are then
// dropped as duplicates (seqTracker.markReplayed), so nothing is published
// twice and the stream continues without a gap.
//
// Memory stays bounded: batches are forwarded one at a time into the
// bounded outbox, and live batches wait in the socket's bounded queue (the
// engine's high-water mark drops the excess, which later shows as a gap the
// replay fills).
func (r *Relay) resync(ctx context.Context, st *seqTracker, b *wire.Batch, reason api.ResetReason) resyncOutcome {
	*st = seqTracker{}
	var first, last uint64
	n := 0
	err := r.fetchReplay(ctx, 0, func(seq uint64, payload []byte) {
		if n == 0 {
			first = seq
			r.announceResync(st, reason, seq)
		}
		if st.classify(seq) != verdictNext {
			return // a hole inside the buffer: the next live batch finds it as a gap
		}
		r.forward(st, b, seq, payload, time.Now(), "replayed")
		last = seq
		n++
	})
	out := r.resyncResult(err, n, first)
	switch out {
	case resyncEmpty:
		if reason != "" {
			// The engine started over and has published nothing since:
			// whatever routers hold for it is gone.
			r.reset(st, reason, 0)
		}
		st.expectFirst()
	case resyncFailed:
		if reason != "" {
			// The engine behind the socket is not proven to be the one
			// followed and its buffer is out of reach (a killed engine
			// behind a listening relay): what routers hold is unproven. The
			// stream stays unstarted, so the next connection resyncs.
			r.reset(st, reason, 0)
		}
	case resyncComplete, resyncPartial:
		// Everything up to last was forwarded or announced lost, so any
		// live batch up to it is a duplicate, even one older than first.
		st.markReplayed(0, last)
	}
	r.metrics.resyncs.WithLabelValues(string(out)).Inc()
	return out
}

// announceResync publishes what must precede the first replayed batch.
func (r *Relay) announceResync(st *seqTracker, reason api.ResetReason, first uint64) {
	switch {
	case first > 0 && reason == "":
		r.reset(st, api.ResetGap, first)
	case first > 0 || reason != "":
		r.reset(st, reason, first)
	}
}

// resyncResult classifies a finished resync and logs what routers lose.
func (r *Relay) resyncResult(err error, n int, first uint64) resyncOutcome {
	switch {
	case n == 0 && err != nil:
		r.log.Warn("reading the engine's replay buffer from seq 0", "err", err)
		return resyncFailed
	case n == 0:
		return resyncEmpty
	case err != nil:
		// What arrived is published; the rest is filled as a gap when the
		// next live batch shows it.
		r.log.Warn("engine replay from seq 0 stopped early", "batches", n, "err", err)
	}
	if first > 0 {
		r.log.Warn("engine replay buffer no longer reaches seq 0; routers lose the endpoint's earlier blocks",
			"first_seq", first, "batches", n)
		return resyncPartial
	}
	r.log.Info("republished the engine's replay buffer from seq 0", "batches", n)
	return resyncComplete
}

// startOver handles a stream whose sequence started over (the engine
// restarted) or is unknown after a reconnect: it republishes the engine's
// buffer from seq 0 when a replay socket is configured, and otherwise (or
// when that yields nothing) resets routers at the live batch liveSeq.
func (r *Relay) startOver(ctx context.Context, st *seqTracker, b *wire.Batch, reason api.ResetReason, liveSeq uint64) {
	if r.cfg.ReplayEndpoint != "" {
		switch r.resync(ctx, st, b, reason) {
		case resyncComplete, resyncPartial:
			return
		}
	}
	r.reset(st, reason, liveSeq)
}

// continues reports whether the engine behind a re-established socket is the
// one the relay followed: its replay buffer must still hold the last batch
// forwarded, byte for byte (vLLM batches carry a timestamp, so a restarted
// engine's batch of the same number differs). Batches it published while the
// socket was down are forwarded on the way.
func (r *Relay) continues(ctx context.Context, st *seqTracker, b *wire.Batch) bool {
	if st.next() == 0 {
		return false // nothing forwarded yet: nothing to recognise it by
	}
	last, sum := st.next()-1, st.lastSum
	same, got := false, false
	err := r.fetchReplay(ctx, last, func(seq uint64, payload []byte) {
		if !got && !same {
			got, same = true, seq == last && xxhash.Sum64(payload) == sum
			return
		}
		if same && st.classify(seq) == verdictNext {
			r.forward(st, b, seq, payload, time.Now(), "replayed")
		}
	})
	if err != nil || !same {
		return false
	}
	if st.next()-1 > last {
		st.markReplayed(last+1, st.next()-1)
	}
	return true
}
