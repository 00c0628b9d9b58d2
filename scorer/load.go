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
// candidates). A candidate without a counter gets one (at zero) when its
// snapshot is first read, so no later decision hashes its name again.
// It holds the snapshot, so that memory cannot be reused for other names.
//
// Owned by one pooled work; the zero value is empty.
type loadRefs struct {
	names []string
	refs  []*endpointLoad
}

func sameSnapshot(a, b []string) bool {
	return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
}

// readCached fills dst with the load of each endpoint, through r.
func (l *Load) readCached(endpoints []string, r *loadRefs, dst []loadSample) []loadSample {
	if !sameSnapshot(r.names, endpoints) {
		r.names, r.refs = endpoints, l.resolve(endpoints, r.refs[:0])
	}
	dst = dst[:0]
	for _, c := range r.refs {
		dst = append(dst, loadSample{inflight: c.inflight.Load(), prefill: c.prefill.Load()})
	}
	return dst
}

// resolve appends the counter of each name to refs, creating missing ones
// under one write lock.
func (l *Load) resolve(names []string, refs []*endpointLoad) []*endpointLoad {
	l.mu.RLock()
	missing := 0
	for _, name := range names {
		c := l.byEnd[name]
		if c == nil {
			missing++
		}
		refs = append(refs, c)
	}
	l.mu.RUnlock()
	if missing == 0 {
		return refs
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byEnd == nil {
		l.byEnd = map[string]*endpointLoad{}
	}
	for i, c := range refs {
		if c != nil {
			continue
		}
		if c = l.byEnd[names[i]]; c == nil {
			c = new(endpointLoad)
			l.byEnd[names[i]] = c
		}
		refs[i] = c
	}
	return refs
}
