package subscriber

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/wire"
)

// Reasons for clearing a source, beyond the relay's api.ResetReason values.
// They label subscriber_resets_total.
const (
	clearGap         = "gap"
	clearMalformed   = "malformed"
	clearRelayChange = "relay_change"
	clearStreamStart = "stream_start"
	clearExpired     = "expired"
	clearLeave       = "leave"
	clearNotMember   = "not_member"
)

func (s *Subscriber) handle(in inbound) {
	if in.heartbeat {
		s.handleHeartbeat(in)
		return
	}
	src, kind, seq, relay, err := parseEventMsg(in.msg)
	if err != nil {
		s.metrics.messages.WithLabelValues("bad_header").Inc()
		s.log.Warn("ignoring event message", "subject", in.msg.Subject, "err", err)
		return
	}
	if claimed := in.msg.Header.Get(api.EventEndpointHeader); claimed != src.Endpoint {
		s.reject("mismatch", "event message header and subject disagree", in.msg.Subject, claimed)
		return
	}
	if !s.admit.admits(src.Model, src.Endpoint) {
		s.reject("unknown_endpoint", "event message for an endpoint that is not a member", in.msg.Subject, src.Endpoint)
		s.forgetNonMember(src)
		return
	}
	s.mu.Lock()
	st := s.stream(src)
	s.mu.Unlock()
	if st.syncing {
		s.holdDuringSync(st, in)
		return
	}
	epoch := eventEpoch(in.msg)
	if kind == api.EventKindReset {
		s.applyReset(src, st, in, seq, epoch)
		return
	}
	s.applyBatch(src, st, in, seq, relay, epoch)
}

// applyReset clears src and resumes at seq. A relay with a mirror starts a
// new epoch with every reset but an overflow, whose mirror is intact: then
// a sync restores the state instead of a clear. A reset of the epoch the
// router already holds (it synced after the reset was published) is
// covered by that snapshot.
func (s *Subscriber) applyReset(src Source, st *streamState, in inbound, seq, epoch uint64) {
	reason := in.msg.Header.Get(api.EventResetReasonHeader)
	if api.ResetReason(reason) == api.ResetRestart && s.onRestart != nil {
		// Heard whether the index is cleared or re-synced below: either way
		// the engine behind the endpoint is a new process.
		s.onRestart(src)
	}
	if epoch != 0 && s.replacer != nil {
		if api.ResetReason(reason) == api.ResetOverflow {
			s.metrics.resets.WithLabelValues(resetLabel(reason)).Inc()
			s.requestSync(src, st, syncOverflow, false)
			return
		}
		if epoch == st.epoch {
			if !st.inOrder {
				st.expect, st.inOrder = seq, true
			}
			return
		}
	}
	s.clear(src, st, resetLabel(reason), in.at)
	st.expect, st.inOrder = seq, true
	if epoch != 0 {
		st.epoch = epoch
	}
}

// resetLabel keeps the metric label set closed whatever a relay sends.
func resetLabel(reason string) string {
	switch api.ResetReason(reason) {
	case api.ResetGap, api.ResetRestart, api.ResetReconnect, api.ResetOverflow:
		return reason
	}
	return "other"
}

// staleEpochAfter is how many successful syncs a held batch of another
// epoch goes through before it is dropped as stale. The first snapshot may
// predate the batch's epoch (the relay moved on while answering), so the
// batch asks once more; a second snapshot of another epoch means the relay
// has left the batch's epoch.
const staleEpochAfter = 2

func (s *Subscriber) applyBatch(src Source, st *streamState, in inbound, seq uint64, relay string, epoch uint64) {
	// One epoch is one relay instance's view of one engine, so within it a
	// batch is never another relay's or another engine's stream.
	sameEpoch := epoch != 0 && epoch == st.epoch
	canSync := epoch != 0 && s.replacer != nil
	switch {
	case canSync && st.epoch != 0 && !sameEpoch && in.synced >= staleEpochAfter:
		// Held through syncs whose snapshots all named another epoch: the
		// relay has left this one, and what the batch did is in (or was
		// undone by) the state the router synced. Asking again would only
		// bring the same snapshot and hold the batch once more, for ever.
		s.metrics.messages.WithLabelValues("stale_epoch").Inc()
		return
	case canSync && st.epoch != 0 && !sameEpoch:
		// Another epoch without the reset that starts it (a restarted
		// relay, or a reset the router missed; its batch may even look like
		// a duplicate): what the router holds may be another engine's
		// state, and the relay's mirror has the current one.
		s.requestSync(src, st, syncEpoch, false)
		s.holdDuringSync(st, in)
		return
	case st.inOrder && relay != st.fresh.Relay && seq != st.expect && !sameEpoch:
		// A different relay instance that does not continue the stream:
		// the engine may have restarted while no relay watched it.
		s.clear(src, st, clearRelayChange, in.at)
	case st.inOrder && seq != st.expect && in.msg.Header.Get(api.EventStreamStartHeader) == "true" && !sameEpoch:
		// The engine's first batch, republished from its replay buffer by a
		// relay (even one reusing a relay id): it supersedes what the
		// Source holds, and the batches after it rebuild the state.
		s.clear(src, st, clearStreamStart, in.at)
	case st.inOrder && seq < st.expect:
		s.metrics.messages.WithLabelValues("duplicate").Inc()
		return
	case st.inOrder && seq > st.expect:
		s.metrics.gaps.Inc()
		s.mu.Lock()
		st.fresh.Gaps++
		s.mu.Unlock()
		if canSync {
			// The relay's mirror holds what the router missed.
			s.requestSync(src, st, syncGap, false)
			s.holdDuringSync(st, in)
			return
		}
		s.clear(src, st, clearGap, in.at)
	}
	if epoch != 0 {
		st.epoch = epoch
	}
	b := batchPool.Get().(*wire.Batch)
	defer putBatch(b)
	if err := wire.DecodeBatch(in.msg.Data, b); err != nil {
		s.metrics.messages.WithLabelValues("malformed").Inc()
		s.log.Warn("clearing source after undecodable batch", "endpoint", src.Endpoint, "err", err)
		s.clear(src, st, clearMalformed, in.at)
		st.inOrder = false
		return
	}
	s.sink.ApplyBatch(src, b)
	s.recordApplied(st, b, seq, relay, in)
}

// batchPool recycles decoded batches across messages: a Sink may only use a
// batch during ApplyBatch (see Sink), so its arenas can take the next
// message, and decoding allocates nothing once they have grown to the
// usual message size. A pool rather than a Subscriber field, because the
// start-up replay and the live loop both decode.
//
// Its batches fold runs of vLLM's one-hash BlockRemoved events into one
// event (wire.Batch.FoldRemovals): the sink removes hashes in order either
// way, and counts every engine event the folded one stands for.
var batchPool = sync.Pool{New: func() any { return &wire.Batch{FoldRemovals: true} }}

// maxPooledBatchBytes bounds what a pooled batch keeps (4 MiB): one huge
// message (a long prompt stored in one step) does not pin its arenas.
const maxPooledBatchBytes = 4 << 20

func putBatch(b *wire.Batch) {
	if b.Footprint() <= maxPooledBatchBytes {
		batchPool.Put(b)
	}
}

func (s *Subscriber) recordApplied(st *streamState, b *wire.Batch, seq uint64, relay string, in inbound) {
	at := in.at
	st.expect, st.inOrder = seq+1, true
	s.mu.Lock()
	st.fresh.LastEvent, st.fresh.LastSeq, st.fresh.HasSeq, st.fresh.Relay = at, seq, true, relay
	s.mu.Unlock()
	s.metrics.appliedMsgs.Inc()
	if b.Skipped > 0 { // an atomic add even of zero
		s.metrics.skippedEvents.Add(float64(b.Skipped))
	}
	// One counter update per kind and message, not per event.
	var stored, removed int
	var sawStored, sawRemoved bool
	for i := range b.Events {
		switch b.Events[i].Kind {
		case wire.KindBlockStored:
			stored, sawStored = stored+len(b.Events[i].BlockHashes), true
		case wire.KindBlockRemoved:
			removed, sawRemoved = removed+len(b.Events[i].BlockHashes), true
		}
	}
	if sawStored {
		s.metrics.storedBlocks.Add(float64(stored))
	}
	if sawRemoved {
		s.metrics.removedBlocks.Add(float64(removed))
	}
	// A replayed batch's age measures the router's downtime, not the event
	// path that the lag histogram (and the TTL advice built on it) is about.
	if b.TS > 0 && !in.replayed {
		s.metrics.lag.Observe(max(0, at.Sub(time.UnixMicro(int64(b.TS*1e6))).Seconds()))
	}
}

// clear empties src in the sink and records why.
func (s *Subscriber) clear(src Source, st *streamState, reason string, at time.Time) {
	s.sink.ClearSource(src)
	s.metrics.resets.WithLabelValues(reason).Inc()
	s.mu.Lock()
	st.fresh.Resets++
	st.fresh.LastReset = at
	s.mu.Unlock()
	st.inOrder = false
}

// stream returns src's state, creating it. Callers hold s.mu.
func (s *Subscriber) stream(src Source) *streamState {
	st, ok := s.streams[src]
	if !ok {
		st = &streamState{}
		s.streams[src] = st
		if s.byEndpoint[src.Endpoint] == nil {
			s.byEndpoint[src.Endpoint] = map[Source]struct{}{}
		}
		s.byEndpoint[src.Endpoint][src] = struct{}{}
	}
	return st
}

// parseEventMsg reads the Source and sequence of an event message.
func parseEventMsg(m *nats.Msg) (src Source, kind string, seq uint64, relay string, err error) {
	model, endpoint, err := parseEventSubject(m.Subject)
	if err != nil {
		return src, "", 0, "", err
	}
	kind = m.Header.Get(api.EventKindHeader)
	if kind != api.EventKindBatch && kind != api.EventKindReset {
		return src, "", 0, "", fmt.Errorf("kind header %q: %w", kind, ErrBadSubject)
	}
	seq, err = strconv.ParseUint(m.Header.Get(api.EventSeqHeader), 10, 64)
	if err != nil {
		return src, "", 0, "", fmt.Errorf("seq header: %w: %w", ErrBadSubject, err)
	}
	rank, err := strconv.Atoi(m.Header.Get(api.EventDPRankHeader))
	if err != nil || rank < 0 {
		return src, "", 0, "", fmt.Errorf("dp rank header %q: %w", m.Header.Get(api.EventDPRankHeader), ErrBadSubject)
	}
	return Source{Model: model, Endpoint: endpoint, DPRank: rank}, kind, seq, m.Header.Get(api.EventRelayHeader), nil
}

// parsedSubjects caches parsed event subjects, so that the endpoint and model
// strings are not decoded and allocated again for every message of a
// stream. Parsing is a pure function of the subject, so the cache is shared by
// every Subscriber; it keeps at most maxParsedSubjects subjects (beyond that,
// subjects are parsed each time), so forged subjects cannot grow it.
var parsedSubjects struct {
	m sync.Map // subject -> *parsedSubject
	n atomic.Int64
}

type parsedSubject struct{ model, endpoint string }

const maxParsedSubjects = 1 << 14

func parseEventSubject(subj string) (model, endpoint string, err error) {
	if v, ok := parsedSubjects.m.Load(subj); ok {
		p := v.(*parsedSubject)
		return p.model, p.endpoint, nil
	}
	model, endpoint, err = api.ParseSubject(api.EventSubjectPrefix, subj)
	if err == nil && parsedSubjects.n.Add(1) <= maxParsedSubjects {
		parsedSubjects.m.Store(strings.Clone(subj), &parsedSubject{model, endpoint})
	}
	return model, endpoint, err
}

// reject counts a message dropped because of who it claims to speak for,
// and logs it at most once per rejectLogEvery.
func (s *Subscriber) reject(result, why, subject, claimed string) {
	s.metrics.messages.WithLabelValues(result).Inc()
	now := s.now()
	if now.Sub(s.lastReject) < rejectLogEvery {
		return
	}
	s.lastReject = now
	s.log.Warn("dropping event message: "+why, "subject", subject, "claimed_endpoint", claimed,
		"membership", membershipMode(s.cfg.HeartbeatMembership))
}

// rejectLogEvery bounds the log lines a flood of forged messages costs.
const rejectLogEvery = 10 * time.Second
