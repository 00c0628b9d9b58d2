package subscriber

import (
	"time"

	"github.com/warmroute/warmroute/api"
)

func (s *Subscriber) handleHeartbeat(in inbound) {
	model, endpoint, err := api.ParseSubject(api.HeartbeatSubjectPrefix, in.msg.Subject)
	h, herr := decodeHeartbeat(in.msg.Data)
	if err != nil || herr != nil {
		s.metrics.messages.WithLabelValues("bad_header").Inc()
		s.log.Warn("ignoring heartbeat", "subject", in.msg.Subject, "err", err, "body_err", herr)
		return
	}
	if h.Model != model || h.Endpoint != endpoint {
		s.reject("mismatch", "heartbeat body and subject disagree", in.msg.Subject, h.Endpoint)
		return
	}
	src := Source{Model: model, Endpoint: endpoint, DPRank: h.DPRank}
	if !s.admit.admits(model, endpoint) {
		s.reject("unknown_endpoint", "heartbeat for an endpoint that is not a member", in.msg.Subject, endpoint)
		s.forgetNonMember(src)
		return
	}
	s.mu.Lock()
	st := s.stream(src)
	changed := st.fresh.LastHeartbeat.IsZero() || st.fresh.EngineConnected != h.EngineConnected ||
		st.fresh.EngineUnknown != h.EngineUnknown
	st.fresh.LastHeartbeat, st.fresh.EngineConnected, st.fresh.EngineUnknown = in.at, h.EngineConnected, h.EngineUnknown
	st.fresh.Interval, st.fresh.Load = h.Interval.D(), h.Load
	wasUp := st.up
	st.up = true
	st.hbEpoch = h.Epoch
	_, expired := s.expiredDown[endpoint]
	if expired || changed {
		delete(s.expiredDown, endpoint)
		s.refreshDown()
	}
	s.mu.Unlock()
	if h.Leaving {
		s.remove(src, st, clearLeave)
		return
	}
	s.syncOnHeartbeat(src, st, h.Epoch, expired)
	s.checkHeartbeatSeq(src, st, h)
	if !wasUp && s.members != nil {
		s.members.SourceUp(src, h)
	}
}

// silenceLimit is how long f's source may stay silent (no batch, no
// heartbeat) before it is expired: HeartbeatMisses of its heartbeat
// intervals. The TTL controller's freshness guard pauses on the same limit.
func (s *Subscriber) silenceLimit(f *Freshness) time.Duration {
	return time.Duration(s.cfg.HeartbeatMisses) * f.interval()
}

// expire removes sources that have been silent beyond their silence limit.
// Only silence the router could have heard counts: while its own NATS
// connection is down nothing expires (every relay would look silent, and
// the engines behind them are as alive as before), and after it returns a
// source's silence is measured from the return. A NATS outage thus leaves
// the endpoints candidates on what the index held; the reconnect sync then
// brings each one up to date.
func (s *Subscriber) expire() {
	if s.deafSince.Load() != 0 {
		return
	}
	now := s.now()
	back := time.Unix(0, s.heardBack.Load())
	var dead []Source
	s.mu.RLock()
	for src, st := range s.streams {
		if now.Sub(latest(st.fresh.lastSeen(), back)) > s.silenceLimit(&st.fresh) {
			dead = append(dead, src)
		}
	}
	s.mu.RUnlock()
	for _, src := range dead {
		s.metrics.expired.Inc()
		s.remove(src, s.streams[src], clearExpired)
	}
}

// forgetNonMember drops the stream of a source that was admitted before and
// is not a member now (a Pod that left its InferencePool, by readiness or
// deletion): its blocks go, and if it becomes a member again its next
// heartbeat is a first contact, which syncs it from its relay, instead of
// resuming a stream whose blocks were dropped.
func (s *Subscriber) forgetNonMember(src Source) {
	s.mu.Lock()
	st := s.streams[src]
	s.mu.Unlock()
	if st != nil {
		s.remove(src, st, clearNotMember)
	}
}

// remove clears src, forgets it and tells the membership observer.
func (s *Subscriber) remove(src Source, st *streamState, reason string) {
	s.sink.ClearSource(src)
	s.metrics.resets.WithLabelValues(reason).Inc()
	s.mu.Lock()
	delete(s.streams, src)
	delete(s.byEndpoint[src.Endpoint], src)
	if len(s.byEndpoint[src.Endpoint]) == 0 {
		delete(s.byEndpoint, src.Endpoint)
	}
	if reason == clearExpired {
		s.markExpired(src.Endpoint)
	}
	s.refreshDown()
	s.mu.Unlock()
	if st.up && s.members != nil {
		s.members.SourceDown(src, reason)
	}
}

// syncOnHeartbeat syncs a Source whose relay has a mirror on first contact
// (a returning endpoint stays out of routing until synced), when its
// epoch is not the one the router holds, and at its first heartbeat after
// the router's NATS connection returned.
func (s *Subscriber) syncOnHeartbeat(src Source, st *streamState, epoch uint64, expired bool) {
	switch {
	case st.syncOnBeat: // marked only when the relay has a mirror
		s.requestSync(src, st, syncReconnect, false)
	case epoch == 0:
	case !st.syncAttempted && expired:
		s.requestSync(src, st, syncExpired, true)
	case !st.syncAttempted:
		s.requestSync(src, st, syncStart, false)
	case st.epoch != 0 && epoch != st.epoch:
		s.requestSync(src, st, syncEpoch, false)
	}
}

// latest is the later of a and b.
func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
