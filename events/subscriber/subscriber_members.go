package subscriber

import (
	"time"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/relay"
)

func (s *Subscriber) handleHeartbeat(in inbound) {
	model, endpoint, err := api.ParseSubject(api.HeartbeatSubjectPrefix, in.msg.Subject)
	h, herr := decodeHeartbeat(in.msg.Data)
	if err != nil || herr != nil || h.Model != model || h.Endpoint != endpoint {
		s.metrics.messages.WithLabelValues("bad_header").Inc()
		s.log.Warn("ignoring heartbeat", "subject", in.msg.Subject, "err", err, "body_err", herr)
		return
	}
	src := Source{Model: model, Endpoint: endpoint, DPRank: h.DPRank}
	s.mu.Lock()
	st := s.stream(src)
	st.fresh.LastHeartbeat, st.fresh.EngineConnected = in.at, h.EngineConnected
	st.fresh.Interval, st.fresh.Load = h.Interval.D(), h.Load
	wasUp := st.up
	st.up = true
	s.mu.Unlock()
	if h.Leaving {
		s.remove(src, st, clearLeave)
		return
	}
	if !wasUp && s.members != nil {
		s.members.SourceUp(src, h)
	}
}

// expire removes sources that have been silent for ExpireMisses intervals.
func (s *Subscriber) expire() {
	now := s.now()
	var dead []Source
	s.mu.RLock()
	for src, st := range s.streams {
		interval := st.fresh.Interval
		if interval <= 0 {
			interval = relay.DefaultHeartbeatInterval
		}
		if now.Sub(st.fresh.lastSeen()) > time.Duration(s.cfg.ExpireMisses)*interval {
			dead = append(dead, src)
		}
	}
	s.mu.RUnlock()
	for _, src := range dead {
		s.metrics.expired.Inc()
		s.remove(src, s.streams[src], clearExpired)
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
	s.mu.Unlock()
	if st.up && s.members != nil {
		s.members.SourceDown(src, reason)
	}
}
