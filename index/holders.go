package index

import (
	"strings"
	"sync"
	"sync/atomic"
)

// endpoints interns endpoint names to dense ids so entries stay small and
// Lookup can index per-call arrays by endpoint.
type endpoints struct {
	mu    sync.RWMutex
	ids   map[string]uint32
	names []string
}

func (e *endpoints) lookup(name string) (uint32, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	id, ok := e.ids[name]
	return id, ok
}

func (e *endpoints) intern(name string) (uint32, error) {
	if id, ok := e.lookup(name); ok {
		return id, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if id, ok := e.ids[name]; ok {
		return id, nil
	}
	if len(e.names) >= maxEndpoints {
		return 0, ErrEndpoint
	}
	if e.ids == nil {
		e.ids = map[string]uint32{}
	}
	id := uint32(len(e.names))
	e.ids[name] = id
	e.names = append(e.names, name)
	return id, nil
}

func (e *endpoints) name(id uint32) string {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.names[id]
}

func (e *endpoints) count() int {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return len(e.names)
}

// holder is the event-side state of one (endpoint, rank): the engine-hash to
// key map that BlockRemoved needs. mu serializes that holder's events and is
// always taken before any shard lock.
type holder struct {
	mu   sync.Mutex
	id   holderID
	name string // the endpoint, for holders.recent
	rev  revTable
	// live counts keys with a confirmed entry; orphans counts rev entries
	// whose key was evicted, so rev can be compacted once they pile up.
	live    atomic.Int64
	orphans atomic.Int64
}

// holders finds holder state by id. Shards call get under their lock (for
// eviction), so holders never takes a shard lock.
type holders struct {
	mu sync.RWMutex
	m  map[holderID]*holder
	// recent caches holders by a hash of endpoint and rank, so that an
	// event's holder is found without the two read locks (four atomic
	// read-modify-writes, each a full fence on x86) and the two map lookups
	// of the endpoint table and this one. Holders and endpoint ids are never
	// removed, so a cached holder whose name and rank match is the one.
	recent [holderCacheSize]atomic.Pointer[holder]
}

const holderCacheSize = 64

// cacheSlot picks endpoint and rank's recent slot (FNV-1a).
func cacheSlot(endpoint string, rank int) int {
	h := uint32(2166136261) ^ uint32(rank)
	for i := 0; i < len(endpoint); i++ {
		h = (h ^ uint32(endpoint[i])) * 16777619
	}
	return int(h % holderCacheSize)
}

// cached returns the holder of (endpoint, rank) if recent has it.
func (t *holders) cached(endpoint string, rank int) *holder {
	h := t.recent[cacheSlot(endpoint, rank)].Load()
	if h != nil && h.name == endpoint && int(uint32(h.id)&0xff) == rank {
		return h
	}
	return nil
}

// remember puts h in recent.
func (t *holders) remember(h *holder) {
	t.recent[cacheSlot(h.name, int(uint32(h.id)&0xff))].Store(h)
}

func (t *holders) get(id holderID) *holder {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.m[id]
}

// getOrCreate returns the holder of id, creating it (for endpoint name).
func (t *holders) getOrCreate(id holderID, name string) *holder {
	if h := t.get(id); h != nil {
		return h
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[holderID]*holder{}
	}
	h := t.m[id]
	if h == nil {
		h = &holder{id: id, name: strings.Clone(name)}
		t.m[id] = h
	}
	return h
}

// ofEndpoint returns every rank's holder of endpoint ep.
func (t *holders) ofEndpoint(ep uint32) []*holder {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []*holder
	for id, h := range t.m {
		if id.endpoint() == ep {
			out = append(out, h)
		}
	}
	return out
}
