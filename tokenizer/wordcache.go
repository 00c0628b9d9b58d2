package tokenizer

import (
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
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
	seed  maphash.Seed // pieces over 16 bytes
	key   uint64       // hash's seed for shorter ones
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
	return &wordCache{slots: make([]atomic.Pointer[cachedWord], wordCacheSlots), seed: maphash.MakeSeed(), key: rand.Uint64()}
}

// cacheable reports whether a piece is worth caching: single bytes are
// cheaper to encode than to look up.
func cacheable(word string) bool { return len(word) > 1 && len(word) <= wordCacheMaxLen }

// set returns the two slots word may occupy.
func (c *wordCache) set(word string) []atomic.Pointer[cachedWord] {
	i := c.hash(word) & (wordCacheSlots - 2)
	return c.slots[i : i+2 : i+2]
}

// hash hashes a piece of up to 16 bytes (nearly every word of prose) inline,
// from two overlapping loads mixed as wyhash mixes them, and a longer one
// with maphash, whose call and setup cost more than hashing a short word (a
// third of a cache hit's time in profiles). A weak hash would only cost
// hits (TestWordCacheSpread): entries are compared in full, so no
// collision gives wrong ids.
func (c *wordCache) hash(w string) uint64 {
	n := len(w)
	var a, b uint64
	switch {
	case n > 16:
		return maphash.String(c.seed, w)
	case n >= 8:
		a, b = load64(w), load64(w[n-8:])
	case n >= 4:
		a, b = uint64(load32(w)), uint64(load32(w[n-4:]))
	case n > 0:
		a = uint64(w[0])<<16 | uint64(w[n>>1])<<8 | uint64(w[n-1])
	}
	return mix64(wyP1^uint64(n), mix64(a^wyP1, b^c.key))
}

// wyP1 is one of wyhash's secret constants.
const wyP1 = 0xe7037ed1a0b428db

// mix64 folds the 128-bit product of a and b.
func mix64(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// load64 and load32 read little-endian words; the compiler merges the byte
// loads into one.
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func load32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
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
