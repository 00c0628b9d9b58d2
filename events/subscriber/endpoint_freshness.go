package subscriber

import "github.com/warmroute/warmroute/index/ttl"

// EndpointFreshness reports what is known about every stream of endpoint
// (all its data-parallel ranks, and models if it serves several), combined
// pessimistically because a request routed there may land on any of them:
// the oldest LastEvent and LastHeartbeat, EngineConnected only if every
// stream's engine is connected, summed Gaps and Resets, the latest
// LastReset, the longest Interval. LastSeq, Relay and Load are those of a
// single stream and are only set when the endpoint has exactly one.
// It reports false when no stream of endpoint is known.
func (s *Subscriber) EndpointFreshness(endpoint string) (Freshness, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	srcs := s.byEndpoint[endpoint]
	if len(srcs) == 0 {
		return Freshness{}, false
	}
	var out Freshness
	first := true
	for src := range srcs {
		f := s.streams[src].fresh
		if first {
			out, first = f, false
			continue
		}
		out = combineFreshness(out, f)
	}
	return out, true
}

func combineFreshness(a, b Freshness) Freshness {
	out := Freshness{Gaps: a.Gaps + b.Gaps, Resets: a.Resets + b.Resets,
		EngineConnected: a.EngineConnected && b.EngineConnected, EngineUnknown: a.EngineUnknown || b.EngineUnknown,
		Interval: max(a.Interval, b.Interval)}
	out.LastEvent = a.LastEvent
	if b.LastEvent.Before(a.LastEvent) {
		out.LastEvent = b.LastEvent
	}
	out.LastHeartbeat = a.LastHeartbeat
	if b.LastHeartbeat.Before(a.LastHeartbeat) {
		out.LastHeartbeat = b.LastHeartbeat
	}
	out.LastReset = a.LastReset
	if b.LastReset.After(a.LastReset) {
		out.LastReset = b.LastReset
	}
	return out
}

// Freshness implements ttl.FreshnessSource: endpoint's combined freshness
// (see EndpointFreshness) and its silence limit, HeartbeatMisses of its
// longest heartbeat interval, the limit after which expiry removes it.
// A sequence gap clears the endpoint at once, so no gap is ever left
// unrecovered for the guard to judge.
func (s *Subscriber) Freshness(endpoint string) (ttl.Freshness, bool) {
	f, ok := s.EndpointFreshness(endpoint)
	if !ok {
		return ttl.Freshness{}, false
	}
	return ttl.Freshness{LastEvent: f.LastEvent, LastHeartbeat: f.LastHeartbeat, Connected: f.EngineConnected,
		SilenceLimit: s.silenceLimit(&f)}, true
}

// EngineLoad reports endpoint's engine gauges from its relay's last
// heartbeat (the scorer's EngineLoad); false when unknown or not scraped.
func (s *Subscriber) EngineLoad(endpoint string) (running, waiting, kvUsage float64, ok bool) {
	f, ok := s.EndpointFreshness(endpoint)
	if !ok || f.Load == nil {
		return 0, 0, 0, false
	}
	return f.Load.Running, f.Load.Waiting, f.Load.KVCacheUsage, true
}
