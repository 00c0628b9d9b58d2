package index

import "sync/atomic"

// Estimated bytes charged per item. A key costs its 16-byte map slot, an
// entry its 16 bytes plus the 16-byte engine-hash map slot that exists for
// it, a prediction its 32 bytes plus map slot and expiry-queue reference; Go
// maps run between 7/16 and 7/8 full, and BenchmarkBytesPerEntry
// (runtime.MemStats) measured 92 B per entry with one holder per key and 64 B
// with four at 1M entries, so the charges are set to those measurements,
// erring high: the bound is then an upper bound in practice.
const (
	keyBytes   = 36
	entryBytes = 56
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
	return int64(len(c.keys))*keyBytes + int64(c.nEntries)*entryBytes + int64(c.spec.n)*specBytes
}

// evict removes least recently useful keys until the shard fits budget. It
// returns the number of keys evicted.
func (c *core) evict(budget, now int64, tick uint32, out *pending) int {
	n := 0
	for c.bytes() > budget && len(c.keys) > 0 {
		c.evictKey(c.pickVictim(tick), now, out)
		n++
	}
	return n
}

// pickVictim returns the least recently used of a few keys, sampling again
// (up to evictRounds) while the oldest seen is as fresh as tick. Go starts
// every map iteration at a random position, and slots are in hash order, so
// the first keys of an iteration are a random sample with respect to recency.
func (c *core) pickVictim(tick uint32) Key {
	var victim Key
	var oldest uint32
	seen := false
	for range evictRounds {
		n := 0
		for k, head := range c.keys {
			used := atomic.LoadUint32(&c.at(head).used)
			if !seen || int32(used-oldest) < 0 {
				victim, oldest, seen = k, used, true
			}
			if n++; n == evictSamples {
				break
			}
		}
		if int32(oldest-tick) < 0 {
			break
		}
	}
	return victim
}

func (c *core) evictKey(key Key, now int64, out *pending) {
	for head := c.keys[key]; head != 0; head = c.keys[key] {
		c.evictFn(c.at(head).holder)
		c.unlink(key, head, 0)
	}
	c.spec.dropKey(key, now, out)
}
