package index

import "sync/atomic"

// Estimated bytes charged per item. A key costs its 32-byte keyTable slot
// (holderSlot, with two holders inline), an entry the 16-byte engine-hash
// revTable slot that exists for it plus, beyond a key's second holder, 12
// bytes of slab; a prediction its 32 bytes plus map slot and expiry-queue
// reference. Both tables run between 13/32 and 13/16 full, so a 32-byte slot
// costs 39 to 79 bytes and a 16-byte one 20 to 39. BenchmarkBytesPerEntry
// (runtime.MemStats) measured about 101 B per entry with one holder per key
// and 57 B with four at 1M entries (81 B and 47 B at 10M); the charges below
// give 104 B and 59 B, so they err high and the bound stays an upper bound.
const (
	keyBytes   = 60
	entryBytes = 44
	specBytes  = 80
)

// evictSamples is how many keys eviction compares. Sampled LRU (as in Redis)
// needs no per-key list links, which would cost 8 more bytes a key; with 8
// samples the victim is nearly always among the oldest few percent.
const evictSamples = 8

// evictRounds bounds how many samples eviction draws while every key it has
// seen was used in the current tick: without it, a key in active use could be
// evicted whenever all eight samples happened to be equally fresh.
const evictRounds = 4

func (c *core) bytes() int64 {
	return int64(c.keys.len())*keyBytes + int64(c.nEntries)*entryBytes + int64(c.spec.n)*specBytes
}

// evict removes least recently useful keys until the shard fits budget. It
// returns the number of keys evicted.
func (c *core) evict(budget, now int64, tick uint32, out *pending) int {
	n := 0
	for c.bytes() > budget && c.keys.len() > 0 {
		c.evictKey(c.pickVictim(tick), now, out)
		n++
	}
	return n
}

// pickVictim returns the least recently used of a few keys, sampling again
// (up to evictRounds) while the oldest seen is as fresh as tick. Each round
// reads the keys following a random slot; slots are in hash order, so they
// are a random sample with respect to recency.
func (c *core) pickVictim(tick uint32) Key {
	var victim Key
	var oldest uint32
	seen := false
	for range evictRounds {
		c.keys.sample(evictSamples, func(s *holderSlot) bool {
			used := atomic.LoadUint32(&s.used)
			if !seen || int32(used-oldest) < 0 {
				victim, oldest, seen = s.key, used, true
			}
			return true
		})
		if int32(oldest-tick) < 0 {
			break
		}
	}
	return victim
}

// evictKey drops key with every holder's entry, telling evictFn about each,
// and its predictions.
func (c *core) evictKey(key Key, now int64, out *pending) {
	p := c.keys.part(key)
	if i, ok := p.find(key); ok {
		s := &p.slots[i]
		for j := range s.in {
			if s.in[j].h != 0 {
				c.evictFn(s.in[j].holder())
				c.nEntries--
			}
		}
		for at := overflowOf(s); at != 0; {
			e := c.at(at)
			next := e.next
			c.evictFn(e.holder)
			c.free(at)
			c.nEntries--
			at = next
		}
		c.keys.removeAt(p, i)
	}
	c.spec.dropKey(key, now, out)
}
