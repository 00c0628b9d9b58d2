package relay

// verdict classifies an incoming engine sequence number.
type verdict uint8

const (
	verdictNext      verdict = iota // continues the stream (or is the first seen)
	verdictGap                      // later than the next expected: batches were lost
	verdictBackwards                // not later than the last: the engine restarted
	verdictDuplicate                // already forwarded from a replay
)

// seqTracker follows one engine sequence space (one endpoint and DP rank) on
// the relay. It is not safe for concurrent use; the zero value expects any
// first sequence number.
type seqTracker struct {
	expect  uint64 // the sequence number that continues the stream
	started bool
	// replayed is the inclusive range last filled from the engine's replay
	// socket. Live batches in it were queued while the replay ran and are
	// duplicates, not a restart.
	replayedFrom, replayedTo uint64
	hasReplayed              bool
	// replayedSums fingerprints the batches forwarded from a replay, by
	// seq, while they are the duplicate window: a live batch in the window
	// with other bytes comes from an engine that restarted meanwhile.
	replayedSums map[uint64]uint64
	// lastSum fingerprints the last forwarded payload, so that after a
	// reconnect the relay can tell the same engine (whose replay buffer
	// still holds that batch) from a restarted one.
	lastSum uint64
}

func (t *seqTracker) classify(seq uint64) verdict {
	switch {
	case !t.started:
		return verdictNext
	case t.hasReplayed && seq >= t.replayedFrom && seq <= t.replayedTo:
		return verdictDuplicate
	case seq == t.expect:
		return verdictNext
	case seq > t.expect:
		return verdictGap
	}
	return verdictBackwards
}

// classifyLive is classify for a live batch with payload fingerprint sum: a
// batch in the duplicate window whose bytes differ from the replayed batch
// of that seq is not a duplicate but a restarted engine's.
func (t *seqTracker) classifyLive(seq, sum uint64) verdict {
	v := t.classify(seq)
	if v == verdictDuplicate {
		if s, ok := t.replayedSums[seq]; ok && s != sum {
			return verdictBackwards
		}
	}
	return v
}

// accept records seq as forwarded. Live batches past the replayed range end
// the duplicate window.
func (t *seqTracker) accept(seq uint64) {
	t.expect, t.started = seq+1, true
	if t.hasReplayed && seq > t.replayedTo {
		t.hasReplayed, t.replayedSums = false, nil
	}
}

// noteReplayed fingerprints a batch forwarded from a replay.
func (t *seqTracker) noteReplayed(seq, sum uint64) {
	if t.replayedSums == nil {
		t.replayedSums = map[uint64]uint64{}
	}
	t.replayedSums[seq] = sum
}

// expectFirst records that the engine has published nothing yet (its replay
// buffer was empty), so the stream must start at seq 0: anything later is a
// gap to fill, not a first batch to take as it comes.
func (t *seqTracker) expectFirst() { *t = seqTracker{started: true} }

// markReplayed records that [from, to] was forwarded from a replay.
func (t *seqTracker) markReplayed(from, to uint64) {
	t.replayedFrom, t.replayedTo, t.hasReplayed = from, to, true
}

// next is the sequence number expected after the last forwarded one.
func (t *seqTracker) next() uint64 { return t.expect }
