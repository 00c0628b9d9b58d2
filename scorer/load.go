package scorer

import (
	"sync"
	"sync/atomic"
)

// Load tracks router-observed in-flight requests per endpoint: a request counts
// from the commit of its routing decision until its response ends, its stream
// breaks or its client cancels. The zero value is ready to use and safe for
// concurrent use.
type Load struct {
	mu       sync.RWMutex
	inflight map[string]*atomic.Int64
}

func (l *Load) counter(endpoint string) *atomic.Int64 {
	l.mu.RLock()
	c := l.inflight[endpoint]
	l.mu.RUnlock()
	if c != nil {
		return c
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inflight == nil {
		l.inflight = map[string]*atomic.Int64{}
	}
	if c = l.inflight[endpoint]; c == nil {
		c = new(atomic.Int64)
		l.inflight[endpoint] = c
	}
	return c
}

// InFlight returns the number of in-flight requests on endpoint.
func (l *Load) InFlight(endpoint string) int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if c := l.inflight[endpoint]; c != nil {
		return c.Load()
	}
	return 0
}

// Snapshot returns in-flight counts for every endpoint seen so far.
func (l *Load) Snapshot() map[string]int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make(map[string]int64, len(l.inflight))
	for ep, c := range l.inflight {
		out[ep] = c.Load()
	}
	return out
}

func (l *Load) add(endpoint string, delta int64) { l.counter(endpoint).Add(delta) }
