package scorer

import (
	"sync"
	"sync/atomic"
)

// Load tracks router-observed load per endpoint: in-flight requests, counted
// from the commit of a routing decision until its response ends (or its stream
// breaks), and queued prefill tokens, the prompt tokens the endpoint was not
// expected to have cached, counted from commit until the response starts. The
// zero value is ready to use and safe for concurrent use.
type Load struct {
	mu    sync.RWMutex
	byEnd map[string]*endpointLoad
}

type endpointLoad struct {
	inflight atomic.Int64
	prefill  atomic.Int64
}

// loadSample is one endpoint's load at the moment of a decision.
type loadSample struct {
	inflight, prefill int64
}

func (l *Load) get(endpoint string) *endpointLoad {
	l.mu.RLock()
	c := l.byEnd[endpoint]
	l.mu.RUnlock()
	if c != nil {
		return c
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byEnd == nil {
		l.byEnd = map[string]*endpointLoad{}
	}
	if c = l.byEnd[endpoint]; c == nil {
		c = new(endpointLoad)
		l.byEnd[endpoint] = c
	}
	return c
}

// InFlight returns the number of in-flight requests on endpoint.
func (l *Load) InFlight(endpoint string) int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if c := l.byEnd[endpoint]; c != nil {
		return c.inflight.Load()
	}
	return 0
}

// PrefillTokens returns the queued prefill tokens on endpoint.
func (l *Load) PrefillTokens(endpoint string) int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if c := l.byEnd[endpoint]; c != nil {
		return c.prefill.Load()
	}
	return 0
}

// Snapshot returns in-flight counts for every endpoint seen so far.
func (l *Load) Snapshot() map[string]int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make(map[string]int64, len(l.byEnd))
	for ep, c := range l.byEnd {
		out[ep] = c.inflight.Load()
	}
	return out
}

func (l *Load) add(endpoint string, delta int64) { l.get(endpoint).inflight.Add(delta) }

func (l *Load) addPrefill(endpoint string, delta int64) { l.get(endpoint).prefill.Add(delta) }

// loadRefs remembers the counters of the candidate list a decision read
// last. Pools hand out endpoint snapshots that are replaced, never mutated,
// so the same slice (same first element, same length) means the same names,
// and counters are never removed: a decision over the same snapshot reads
// the counters directly instead of hashing every name (about 20 us at 512
// candidates). Names without counters yet are looked up again each time.
// It holds the snapshot, so that memory cannot be reused for other names.
//
// Owned by one pooled work; the zero value is empty.
type loadRefs struct {
	names []string
	refs  []*endpointLoad
	nils  int // refs still nil
}

func sameSnapshot(a, b []string) bool {
	return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
}

// readCached fills dst with the load of each endpoint, through r.
func (l *Load) readCached(endpoints []string, r *loadRefs, dst []loadSample) []loadSample {
	if !sameSnapshot(r.names, endpoints) {
		r.names, r.refs, r.nils = endpoints, r.refs[:0], len(endpoints)
		for range endpoints {
			r.refs = append(r.refs, nil)
		}
	}
	if r.nils > 0 {
		l.resolve(r)
	}
	dst = dst[:0]
	for _, c := range r.refs {
		var s loadSample
		if c != nil {
			s = loadSample{inflight: c.inflight.Load(), prefill: c.prefill.Load()}
		}
		dst = append(dst, s)
	}
	return dst
}

// resolve fills r's nil counters from the map, under one read lock.
func (l *Load) resolve(r *loadRefs) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	r.nils = 0
	for i, c := range r.refs {
		if c == nil {
			if c = l.byEnd[r.names[i]]; c == nil {
				r.nils++
			}
			r.refs[i] = c
		}
	}
}
