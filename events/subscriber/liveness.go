package subscriber

// Reasons an endpoint is down, for the scorer's exclusion counter.
const (
	// DownDisconnected: a relay of the endpoint reports its engine gone.
	DownDisconnected = "disconnected"
	// DownExpired: the endpoint's relays fell silent past the silence limit
	// and were expired.
	DownExpired = "expired"
	// DownSyncing: the endpoint returned after its relays expired and its
	// state is being re-synced from a relay's snapshot; it is a candidate
	// again once the sync completes (or fails: then on its live stream).
	DownSyncing = "syncing"
)

// maxExpiredDown bounds the endpoints remembered as expired, so that a flood
// of sources cannot grow the set without bound; past it the oldest memory
// is not kept (such an endpoint is then unknown, as before any heartbeat).
const maxExpiredDown = 4096

// Down reports whether endpoint's engine is known to be down, and why: a
// relay of it (any data-parallel rank) reports its engine disconnected, or
// its relays expired and none has been heard since. An endpoint the
// subscriber has never heard of is not down: static endpoints without relays
// route on load. It is the scorer's Liveness, read on the request path: one
// atomic load and a map lookup.
func (s *Subscriber) Down(endpoint string) (reason string, down bool) {
	m := s.down.Load()
	if m == nil {
		return "", false
	}
	reason, down = (*m)[endpoint]
	return reason, down
}

// refreshDown rebuilds the down set; s.mu must be held for writing. It runs
// when a stream's engine state changes or a stream goes, not per message.
func (s *Subscriber) refreshDown() {
	next := make(map[string]string, len(s.expiredDown))
	for ep := range s.expiredDown {
		next[ep] = DownExpired
	}
	syncing := map[string]struct{}{}
	for src, st := range s.streams {
		if !st.fresh.LastHeartbeat.IsZero() && !st.fresh.EngineConnected && !st.fresh.EngineUnknown {
			next[src.Endpoint] = DownDisconnected
		}
		if st.syncing {
			syncing[src.Endpoint] = struct{}{}
		}
	}
	for src, st := range s.streams {
		if _, down := next[src.Endpoint]; !down && st.syncing && st.syncExcludes {
			next[src.Endpoint] = DownSyncing
		}
	}
	prev := s.down.Swap(&next)
	s.syncingEPs.Store(&syncing)
	s.logDownChanges(prev, next)
}

// logDownChanges logs each endpoint that went down or came back, one line
// per change, so an operator (and the fault tests) see when the router
// stopped and resumed routing to it.
func (s *Subscriber) logDownChanges(prev *map[string]string, next map[string]string) {
	var was map[string]string
	if prev != nil {
		was = *prev
	}
	for ep, reason := range next {
		if old, ok := was[ep]; !ok || old != reason {
			s.log.Info("endpoint down", "endpoint", ep, "reason", reason)
		}
	}
	for ep := range was {
		if _, ok := next[ep]; !ok {
			s.log.Info("endpoint live again", "endpoint", ep)
		}
	}
}

// Syncing reports whether a relay's snapshot of endpoint is being fetched
// or applied (scorer.SyncReporter): the endpoint is counted in state
// syncing. Only a returning endpoint is also Down meanwhile; one synced
// after a reconnect, a gap or an epoch change keeps routing on what it
// holds.
func (s *Subscriber) Syncing(endpoint string) bool {
	m := s.syncingEPs.Load()
	if m == nil {
		return false
	}
	_, ok := (*m)[endpoint]
	return ok
}

// markExpired remembers endpoint as down once its last stream expired; s.mu
// must be held for writing.
func (s *Subscriber) markExpired(endpoint string) {
	if len(s.byEndpoint[endpoint]) > 0 || len(s.expiredDown) >= maxExpiredDown {
		return
	}
	if s.expiredDown == nil {
		s.expiredDown = map[string]struct{}{}
	}
	s.expiredDown[endpoint] = struct{}{}
}
