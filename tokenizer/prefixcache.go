package tokenizer

import (
	"container/list"
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
	hash uint64
	text string   // the prefix, kept to verify a hash match byte for byte
	ids  []uint32 // its ids without post-processor tokens
}

func (e *prefixEntry) size() int { return len(e.text) + 4*len(e.ids) + 64 }

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
	if !c.enabled {
		return c.tk.Encode(text, addSpecial)
	}
	st := c.tk.states.Get().(*encodeState)
	cuts := c.tk.appendCuts(nil, text, st)
	c.tk.states.Put(st)
	hashes := c.prefixHashes(text, cuts)
	var out []uint32
	if addSpecial {
		out = append(out, c.tk.post.prefix...)
	}
	body, err := c.encodeBody(text, cuts, hashes, out)
	if err != nil {
		return nil, err
	}
	if addSpecial {
		body = append(body, c.tk.post.suffix...)
	}
	return body, nil
}

// encodeBody appends the ids of text (no post-processing) to dst.
func (c *PrefixCache) encodeBody(text string, cuts []int, hashes []uint64, dst []uint32) ([]uint32, error) {
	from, base := c.lookup(text, cuts, hashes)
	dst = append(dst, base...)
	if len(cuts) == 0 || cuts[len(cuts)-1] <= from {
		return c.tk.AppendEncode(dst, text[from:], false)
	}
	last := cuts[len(cuts)-1]
	start := len(dst)
	dst, err := c.tk.AppendEncode(dst, text[from:last], false)
	if err != nil {
		return nil, err
	}
	c.store(hashes[len(hashes)-1], text[:last], dst[start-len(base):])
	return c.tk.AppendEncode(dst, text[last:], false)
}

// prefixHashes hashes text up to each cut in one pass.
func (c *PrefixCache) prefixHashes(text string, cuts []int) []uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	out := make([]uint64, len(cuts))
	prev := 0
	for i, cut := range cuts {
		h.WriteString(text[prev:cut])
		out[i], prev = h.Sum64(), cut
	}
	return out
}

// lookup finds the longest cached prefix among the cuts; it returns where
// encoding must resume and the cached ids (shared, read-only).
func (c *PrefixCache) lookup(text string, cuts []int, hashes []uint64) (int, []uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(cuts) - 1; i >= 0; i-- {
		el, ok := c.byHash[hashes[i]]
		if !ok {
			continue
		}
		e := el.Value.(*prefixEntry)
		if e.text != text[:cuts[i]] {
			continue
		}
		c.lru.MoveToFront(el)
		c.hits++
		return cuts[i], e.ids
	}
	c.misses++
	return 0, nil
}

func (c *PrefixCache) store(hash uint64, prefix string, ids []uint32) {
	e := &prefixEntry{hash: hash, text: prefix, ids: slices.Clone(ids)}
	if e.size() > c.maxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byHash[hash]; ok {
		c.remove(el)
	}
	c.byHash[hash] = c.lru.PushFront(e)
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
