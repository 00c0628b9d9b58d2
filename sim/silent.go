package sim

import (
	"math/rand/v2"
	"sync"
)

// silentStores draws which requests store nothing without failing: the
// response is normal (the router sees no error) but no block is cached or
// published, as when an engine preempts or aborts a request after its
// response started, or caches it under an identity the router does not know.
// A nil *silentStores never draws. Safe for concurrent use.
type silentStores struct {
	mu   sync.Mutex
	rate float64
	rng  *rand.Rand
}

// newSilentStores returns nil for rate 0, so the common case costs nothing.
func newSilentStores(rate float64, seed uint64) *silentStores {
	if rate <= 0 {
		return nil
	}
	return &silentStores{rate: rate, rng: rand.New(rand.NewPCG(seed, seed^0x51e47))}
}

// draw reports whether the next request stores nothing.
func (s *silentStores) draw() bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rng.Float64() < s.rate
}
