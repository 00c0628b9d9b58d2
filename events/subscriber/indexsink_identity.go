package subscriber

import (
	"sync"
	"sync/atomic"

	"github.com/zeebo/xxh3"

	"github.com/warmroute/warmroute/events/wire"
	"github.com/warmroute/warmroute/index"
)

// identityOf is the identity a BlockStored's blocks were computed under: its
// adapter (else the Source's model) and the cache salt the engine sent
// (SGLang's cache_salt field, vLLM's first extra key), so a salted request
// matches only blocks stored under its salt and an unsalted one never does.
func identityOf(src Source, ev *wire.Event) index.Identity {
	return index.Identity{Model: src.Model, LoRA: ev.LoRAName, CacheSalt: ev.Salt()}
}

// extraOf returns, per block, a digest of the extra keys a router cannot
// reproduce from a request (multimodal hashes, prompt-embedding digests),
// or nil when no block has one: the index folds them into the keys, so an
// image block never matches the text of its placeholder tokens.
func extraOf(ev *wire.Event) []uint64 {
	var extra []uint64
	for i, raw := range ev.ExtraKeys {
		if !ev.Opaque(i) {
			continue
		}
		if extra == nil {
			extra = make([]uint64, len(ev.ExtraKeys))
		}
		extra[i] = xxh3.Hash(raw) | 1 // never 0, which means none
	}
	return extra
}

// tracked reports whether a KV cache group's blocks are full-attention
// blocks, which the index keys (wire.FullAttention): the index follows only
// those groups, so a model with no full-attention group gets no confirmed
// blocks.
func tracked(kind string) bool { return wire.FullAttention(kind) }

// sparseGroups remembers, per Source, the KV cache groups whose stores were
// not tracked, so their removals (which carry a group index but no kind)
// are ignored too. Safe for concurrent use; the zero value is empty.
type sparseGroups struct {
	some atomic.Bool // any group added: lets the common case skip the lock
	mu   sync.Mutex
	set  map[sparseGroup]struct{}
}

type sparseGroup struct {
	src   Source
	group int
}

func (g *sparseGroups) add(src Source, group int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.set == nil {
		g.set = map[sparseGroup]struct{}{}
	}
	g.set[sparseGroup{src, group}] = struct{}{}
	g.some.Store(true)
}

func (g *sparseGroups) has(src Source, group int) bool {
	if !g.some.Load() {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.set[sparseGroup{src, group}]
	return ok
}

// forget drops what is remembered about an endpoint's Sources.
func (g *sparseGroups) forget(endpoint string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for k := range g.set {
		if k.src.Endpoint == endpoint {
			delete(g.set, k)
		}
	}
}

// skipGroup reports whether ev belongs to a KV cache group the index does
// not follow, learning the group from stores.
func (s *IndexSink) skipGroup(src Source, ev *wire.Event) bool {
	switch ev.Kind {
	case wire.KindBlockStored:
		if tracked(ev.SpecKind) {
			return false
		}
		s.sparse.add(src, ev.GroupIdx)
		return true
	case wire.KindBlockRemoved:
		return s.sparse.has(src, ev.GroupIdx)
	}
	return false
}
