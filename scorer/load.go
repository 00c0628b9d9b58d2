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

// read fills dst with the load of each endpoint under one read lock, so a
// decision over hundreds of candidates does not lock once per candidate.
func (l *Load) read(endpoints []string, dst []loadSample) []loadSample {
	dst = dst[:0]
	l.mu.RLock()
	defer l.mu.RUnlock()
	for _, ep := range endpoints {
		var s loadSample
		if c := l.byEnd[ep]; c != nil {
			s = loadSample{inflight: c.inflight.Load(), prefill: c.prefill.Load()}
		}
		dst = append(dst, s)
	}
	return dst
}

func (l *Load) add(endpoint string, delta int64) { l.get(endpoint).inflight.Add(delta) }

func (l *Load) addPrefill(endpoint string, delta int64) { l.get(endpoint).prefill.Add(delta) }
