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

// cachedWord is one entry. A short piece with few ids (nearly every word
// of prose) lives inline, in the entry's own memory: a hit then reads one
// object, where a separate string and slice cost two more dependent cache
// misses, the larger part of a hit's time on a loaded machine (profiles of
// 100k-token prompts: a third of tokenization in appendHit). Longer pieces
// keep word and ids beside it.
type cachedWord struct {
	ids  []uint32 // inl[:n] for an inline entry
	word string   // set only when the piece does not fit in buf
	wlen uint8    // piece length when inline, else 0
	buf  [inlineWordBytes]byte
	inl  [inlineWordIDs]uint32
}

const (
	inlineWordBytes = 22
	inlineWordIDs   = 4
)

// newCachedWord copies word and ids into a new entry: the word points into
// the caller's prompt, which must not stay reachable from the cache.
func newCachedWord(word string, ids []uint32) *cachedWord {
	e := &cachedWord{}
	if len(word) <= inlineWordBytes && len(ids) <= inlineWordIDs {
		e.wlen = uint8(copy(e.buf[:], word))
		e.ids = e.inl[:copy(e.inl[:], ids)]
		return e
	}
	e.word = strings.Clone(word)
	e.ids = append([]uint32(nil), ids...)
	return e
}

// is reports whether e caches word. The conversion in the comparison does
// not allocate.
func (e *cachedWord) is(word string) bool {
	if e.wlen > 0 {
		return int(e.wlen) == len(word) && string(e.buf[:e.wlen]) == word
	}
	return e.word == word
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
		if e.is(word) {
			return append(dst, e.ids...), true
		}
	}
	return dst, false
}

// store caches ids for word when one of its slots is free.
func (c *wordCache) store(word string, ids []uint32) {
	if c == nil {
		return
	}
	set := c.set(word)
	if set[0].Load() != nil && set[1].Load() != nil {
		return
	}
	e := newCachedWord(word, ids)
	for i := range 2 {
		if set[i].CompareAndSwap(nil, e) {
			return
		}
	}
}
