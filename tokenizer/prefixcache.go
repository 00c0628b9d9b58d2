package tokenizer

import (
	"container/list"
	"encoding/binary"
	"hash/maphash"
	"slices"
	"sync"
)

// PrefixCache re-uses the ids of an earlier, shorter text when a new text
// extends it, as turn N+1 of a chat extends turn N. Only boundaries right
// after an added token (such as <|im_end|> or <|eot_id|>) are re-used,
// because only there is the split provably invisible to the pre-tokenizer.
// Memory is bounded by an LRU on text plus id bytes.
//
// A PrefixCache is safe for concurrent use. The zero value is not usable;
// use NewPrefixCache.
type PrefixCache struct {
	tk       *Tokenizer
	enabled  bool
	maxBytes int
	seed     maphash.Seed

	mu     sync.Mutex
	lru    *list.List // of *prefixEntry, most recent first
	byHash map[uint64]*list.Element
	bytes  int
	hits   uint64
	misses uint64
}

type prefixEntry struct {
	hash  uint64
	text  string   // the prefix, kept to verify a hash match byte for byte
	ids   *idChunk // its ids without post-processor tokens
	total int      // how many ids the chunks hold
}

// size counts every id of the chain, although chunks are shared with the
// entries this one extends: an evicted entry's chunks stay reachable only
// through live entries, so the sum over live entries bounds what is held.
func (e *prefixEntry) size() int { return len(e.text) + 4*e.total + 64 }

// idChunk is one turn's worth of a prefix's ids; prev holds the ids before
// them. Storing turn N+1 then copies only its own ids, not the whole
// conversation's. Chunks are immutable once stored.
type idChunk struct {
	prev *idChunk
	ids  []uint32
}

// appendIDs appends the ids held by the chain ending at c, oldest first.
func (c *idChunk) appendIDs(dst []uint32) []uint32 {
	n := 0
	for k := c; k != nil; k = k.prev {
		n += len(k.ids)
	}
	dst = slices.Grow(dst, n)[:len(dst)+n]
	end := len(dst)
	for ; c != nil; c = c.prev {
		end -= len(c.ids)
		copy(dst[end:], c.ids)
	}
	return dst
}

// NewPrefixCache returns a cache over tk holding at most maxBytes of
// prefixes and ids (at least 1 MiB is sensible for long chats).
func NewPrefixCache(tk *Tokenizer, maxBytes int) *PrefixCache {
	return &PrefixCache{
		tk: tk, enabled: tk.cutSafe(), maxBytes: maxBytes, seed: maphash.MakeSeed(),
		lru: list.New(), byHash: map[uint64]*list.Element{},
	}
}

// Encode returns the same ids as tk.Encode(text, addSpecial), re-using the
// longest cached prefix and remembering this text's last safe boundary.
func (c *PrefixCache) Encode(text string, addSpecial bool) ([]uint32, error) {
	ids, err := c.AppendEncode(nil, text, addSpecial)
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// AppendEncode is Encode appending to dst, to let callers reuse buffers.
// The cached ids are copied into dst, never shared with it.
func (c *PrefixCache) AppendEncode(dst []uint32, text string, addSpecial bool) ([]uint32, error) {
	if !c.enabled {
		return c.tk.AppendEncode(dst, text, addSpecial)
	}
	st := c.tk.states.Get().(*encodeState)
	st.scratch.longBytes = 0
	cuts := c.tk.appendCuts(st.cuts[:0], text, st)
	st.cuts = cuts
	defer c.tk.states.Put(st)
	base := c.lookup(text, cuts)
	// A capacity hint: tokens average several bytes, so half the new bytes
	// is rarely exceeded, and append still grows the slice if it is.
	dst = slices.Grow(dst, len(c.tk.post.prefix)+base.total+(len(text)-len(base.text))/2+8+len(c.tk.post.suffix))
	if addSpecial {
		dst = append(dst, c.tk.post.prefix...)
	}
	dst, err := c.encodeBody(text, base, cuts, dst)
	if err != nil {
		return dst, err
	}
	if addSpecial {
		dst = append(dst, c.tk.post.suffix...)
	}
	return dst, nil
}

// encodeBody appends to dst the ids of text (no post-processing), given
// base, the cached entry for a prefix of text (its zero value for none).
func (c *PrefixCache) encodeBody(text string, base prefixEntry, cuts []int, dst []uint32) ([]uint32, error) {
	from := len(base.text)
	dst = base.ids.appendIDs(dst)
	if len(cuts) == 0 || cuts[len(cuts)-1] <= from {
		return c.tk.AppendEncode(dst, text[from:], false)
	}
	last := cuts[len(cuts)-1]
	start := len(dst)
	dst, err := c.tk.AppendEncode(dst, text[from:last], false)
	if err != nil {
		return dst, err
	}
	c.store(prefixEntry{
		hash: c.key(text[:last]), text: text[:last],
		ids:   &idChunk{prev: base.ids, ids: slices.Clone(dst[start:])},
		total: base.total + len(dst) - start,
	})
	return c.tk.AppendEncode(dst, text[last:], false)
}

// keyWindow is how many bytes at each end of a prefix its key covers.
const keyWindow = 64

// key hashes a prefix's length and its first and last keyWindow bytes, so
// the cost does not grow with the conversation. A match is confirmed byte
// for byte (lookup), so two prefixes sharing a key cost only a cache slot,
// never a wrong id.
func (c *PrefixCache) key(prefix string) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	h.WriteString(prefix[:min(len(prefix), keyWindow)])
	h.WriteString(prefix[max(0, len(prefix)-keyWindow):])
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(prefix)))
	h.Write(n[:])
	return h.Sum64()
}

// lookup finds the longest cached prefix among the cuts and returns a copy
// of its entry (whose chunks are shared and read-only), or the zero entry.
func (c *PrefixCache) lookup(text string, cuts []int) prefixEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(cuts) - 1; i >= 0; i-- {
		el, ok := c.byHash[c.key(text[:cuts[i]])]
		if !ok {
			continue
		}
		e := el.Value.(*prefixEntry)
		if e.text != text[:cuts[i]] {
			continue
		}
		c.lru.MoveToFront(el)
		c.hits++
		return *e
	}
	c.misses++
	return prefixEntry{}
}

func (c *PrefixCache) store(e prefixEntry) {
	if e.size() > c.maxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byHash[e.hash]; ok {
		c.remove(el)
	}
	c.byHash[e.hash] = c.lru.PushFront(&e)
	c.bytes += e.size()
	for c.bytes > c.maxBytes {
		c.remove(c.lru.Back())
	}
}

func (c *PrefixCache) remove(el *list.Element) {
	e := c.lru.Remove(el).(*prefixEntry)
	delete(c.byHash, e.hash)
	c.bytes -= e.size()
}

// Stats reports lookups that re-used a prefix and those that did not.
func (c *PrefixCache) Stats() (hits, misses uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.misses
}
