package tokenizer

import (
	"hash/maphash"
	"strings"
	"sync/atomic"
)

// wordCache remembers the ids of recently encoded pre-tokenized pieces, as
// the reference library's BPE cache does: prose repeats a few thousand
// words, and a hit replaces symbol setup and the merge loop with one hash
// and one string compare.
//
// It is two-way set-associative and, like the reference's, never evicts: a
// piece whose two slots are taken is encoded every time. Memory is bounded
// by wordCacheSlots entries, and a steady workload stops allocating once its
// frequent words are in (replacing entries instead would make colliding
// words evict each other forever). Entries are immutable once published,
// so lookups need no lock. Safe for concurrent use; the zero value caches
// nothing.
type wordCache struct {
	slots []atomic.Pointer[cachedWord]
	seed  maphash.Seed
}

type cachedWord struct {
	word string
	ids  []uint32
}

const (
	// wordCacheSlots bounds the cache: at most this many pieces, about
	// 4 MiB when full of typical words.
	wordCacheSlots = 1 << 16
	// wordCacheMaxLen is the longest piece cached, in bytes; the
	// reference library stops at the same length. Longer pieces are rare
	// and would cost more to hash and compare than they repeat.
	wordCacheMaxLen = 256
)

func newWordCache() *wordCache {
	return &wordCache{slots: make([]atomic.Pointer[cachedWord], wordCacheSlots), seed: maphash.MakeSeed()}
}

// cacheable reports whether a piece is worth caching: single bytes are
// cheaper to encode than to look up.
func cacheable(word string) bool { return len(word) > 1 && len(word) <= wordCacheMaxLen }

// set returns the two slots word may occupy.
func (c *wordCache) set(word string) []atomic.Pointer[cachedWord] {
	i := maphash.String(c.seed, word) & (wordCacheSlots - 2)
	return c.slots[i : i+2 : i+2]
}

// appendHit appends the cached ids of word to dst and reports whether word
// was cached.
func (c *wordCache) appendHit(dst []uint32, word string) ([]uint32, bool) {
	if c == nil {
		return dst, false
	}
	set := c.set(word)
	for i := range 2 {
		e := set[i].Load()
		if e == nil {
			return dst, false
		}
		if e.word == word {
			return append(dst, e.ids...), true
		}
	}
	return dst, false
}

// store caches ids for word when one of its slots is free. The word is
// copied: it points into the caller's prompt, which must not stay
// reachable from the cache.
func (c *wordCache) store(word string, ids []uint32) {
	if c == nil {
		return
	}
	set := c.set(word)
	if set[0].Load() != nil && set[1].Load() != nil {
		return
	}
	e := &cachedWord{word: strings.Clone(word), ids: append([]uint32(nil), ids...)}
	for i := range 2 {
		if set[i].CompareAndSwap(nil, e) {
			return
		}
	}
}
