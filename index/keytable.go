package index

import (
	"math/rand/v2"
	"sync/atomic"
)

// keySlot is one key of a shard: its key, the 1-based head of its entry list
// (0 marks a free slot) and its recency stamp. Keeping the stamp here rather
// than in the head entry means Lookup touches a line it already loaded.
type keySlot struct {
	key  Key
	head uint32
	used uint32 // recency tick; accessed atomically (Lookup writes it under a read lock)
}

// keyTable maps a shard's keys to their entry lists. It is split into
// keyParts flat tables chosen by key bits the shard and slot indexes do not
// use, so that growing one (a copy under the shard's write lock) moves a
// sixteenth of the shard: a few hundred microseconds at 10M keys rather than
// several milliseconds.
type keyTable struct {
	parts [keyParts]flatKeys
	n     int
}

const keyParts = 16

func (t *keyTable) part(k Key) *flatKeys { return &t.parts[(uint64(k)>>32)&(keyParts-1)] }

func (t *keyTable) len() int { return t.n }

func (t *keyTable) slot(k Key) *keySlot { return t.part(k).slot(k) }

func (t *keyTable) head(k Key) uint32 { return t.part(k).head(k) }

// put sets key's head, inserting the key (with stamp tick) when absent, and
// returns its slot. head must not be 0.
func (t *keyTable) put(k Key, head, tick uint32) *keySlot {
	p := t.part(k)
	before := p.n
	s := p.put(k, head, tick)
	t.n += p.n - before
	return s
}

// claim returns key's slot with one probe, inserting the key (stamped
// tick, head 0) when absent; found says it was there. A claimed slot must get
// its head set before the shard's lock is released: head 0 marks a free slot.
func (t *keyTable) claim(k Key, tick uint32) (s *keySlot, found bool) {
	p := t.part(k)
	if (p.n+1)*maxLoadDen > len(p.slots)*maxLoadNum {
		p.grow()
	}
	for i := uint64(k) & p.mask; ; i = (i + 1) & p.mask {
		s := &p.slots[i]
		if s.head == 0 {
			*s = keySlot{key: k, used: tick}
			p.n++
			t.n++
			return s, false
		}
		if s.key == k {
			return s, true
		}
	}
}

func (t *keyTable) remove(k Key) {
	p := t.part(k)
	before := p.n
	p.remove(k)
	t.n += p.n - before
}

// removeAt deletes the key in slot i of part p (p is t.part(key), i what
// p.find returned), without probing for it again.
func (t *keyTable) removeAt(p *flatKeys, i uint64) {
	p.removeAt(i)
	t.n--
}

// sample calls f with up to n occupied slots, starting at a random slot of a
// random part; it stops early when f returns false.
func (t *keyTable) sample(n int, f func(*keySlot) bool) {
	start := rand.IntN(keyParts)
	for i := 0; i < keyParts && n > 0; i++ {
		seen, stopped := t.parts[(start+i)%keyParts].sample(n, f)
		if stopped {
			return
		}
		n -= seen
	}
}

// all calls f with every key and its head.
func (t *keyTable) all(f func(Key, uint32)) {
	for i := range t.parts {
		t.parts[i].all(f)
	}
}

// flatKeys is one part of a keyTable: open addressing with linear probing
// over one flat array, so a probe is one dependent memory load (a Go map
// takes several: header, directory, table, group) and a key costs 16 bytes
// divided by the load factor. Keys are hash outputs, so the low bits index
// the array as they are. Deletion shifts the following run back rather than
// leaving tombstones, so probe lengths never degrade. Growth doubles the array
// and reinserts every key.
//
// Not safe for concurrent use beyond what core documents: readers may only
// touch stamps.
type flatKeys struct {
	slots []keySlot
	mask  uint64
	n     int
}

const (
	minKeySlots = 16
	// A table grows past 13/16 full: linear probing stays short (a hit
	// probes about three slots, a miss a few cache lines) while an average
	// table, between 13/32 and 13/16 full, costs about 26 bytes a key.
	maxLoadNum, maxLoadDen = 13, 16
)

// find returns key's slot index and whether the key is present.
func (t *flatKeys) find(key Key) (uint64, bool) {
	if t.n == 0 {
		return 0, false
	}
	for i := uint64(key) & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.head == 0 {
			return 0, false
		}
		if s.key == key {
			return i, true
		}
	}
}

// slot returns key's slot, or nil when the key is absent.
func (t *flatKeys) slot(key Key) *keySlot {
	if i, ok := t.find(key); ok {
		return &t.slots[i]
	}
	return nil
}

// head returns the head entry of key's list, or 0.
func (t *flatKeys) head(key Key) uint32 {
	if s := t.slot(key); s != nil {
		return s.head
	}
	return 0
}

// put sets key's head, inserting the key (with stamp tick) when absent, and
// returns its slot. head must not be 0.
func (t *flatKeys) put(key Key, head, tick uint32) *keySlot {
	if (t.n+1)*maxLoadDen > len(t.slots)*maxLoadNum {
		t.grow()
	}
	for i := uint64(key) & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.head == 0 {
			*s = keySlot{key: key, head: head, used: tick}
			t.n++
			return s
		}
		if s.key == key {
			s.head = head
			return s
		}
	}
}

func (t *flatKeys) grow() { t.resize(max(minKeySlots, 2*len(t.slots))) }

// reserve grows t so that n keys, of which some may already be there
// (other holders' copies of the same blocks), fit without another growth:
// it sizes for the larger of n and what t holds, never for their sum, so
// a replace of keys mostly present does not double a table for good; new
// keys beyond that cost at most one ordinary growth.
func (t *flatKeys) reserve(n int) {
	size := max(minKeySlots, len(t.slots))
	for max(t.n, n)*maxLoadDen > size*maxLoadNum {
		size *= 2
	}
	if size > len(t.slots) {
		t.resize(size)
	}
}

// resize moves every key into a new array of size slots (a power of two).
func (t *flatKeys) resize(size int) {
	old := t.slots
	t.slots, t.mask = make([]keySlot, size), uint64(size-1)
	for _, s := range old {
		if s.head == 0 {
			continue
		}
		i := uint64(s.key) & t.mask
		for t.slots[i].head != 0 {
			i = (i + 1) & t.mask
		}
		t.slots[i] = s
	}
}

// remove deletes key, shifting back any later slot of the same run whose
// home position the hole now precedes, so no lookup ever stops early.
func (t *flatKeys) remove(key Key) {
	if hole, ok := t.find(key); ok {
		t.removeAt(hole)
	}
}

// removeAt deletes the occupied slot hole, as remove does once it has found
// it.
func (t *flatKeys) removeAt(hole uint64) {
	for j := (hole + 1) & t.mask; t.slots[j].head != 0; j = (j + 1) & t.mask {
		home := uint64(t.slots[j].key) & t.mask
		// The slot at j may fill the hole unless its home lies cyclically
		// in (hole, j]: then a probe from home would never pass the hole.
		if (j-home)&t.mask >= (j-hole)&t.mask {
			t.slots[hole] = t.slots[j]
			hole = j
		}
	}
	t.slots[hole] = keySlot{}
	t.n--
}

// sample calls f with up to n occupied slots, starting at a random position.
// It returns how many it visited and whether f stopped it.
func (t *flatKeys) sample(n int, f func(*keySlot) bool) (seen int, stopped bool) {
	if t.n == 0 {
		return 0, false
	}
	start := rand.Uint64() & t.mask
	for k := uint64(0); k <= t.mask && seen < n; k++ {
		s := &t.slots[(start+k)&t.mask]
		if s.head == 0 {
			continue
		}
		seen++
		if !f(s) {
			return seen, true
		}
	}
	return seen, false
}

// all calls f with every key and its head.
func (t *flatKeys) all(f func(Key, uint32)) {
	for i := range t.slots {
		if s := &t.slots[i]; s.head != 0 {
			f(s.key, s.head)
		}
	}
}

func touchSlot(s *keySlot, tick uint32) {
	if atomic.LoadUint32(&s.used) != tick {
		atomic.StoreUint32(&s.used, tick)
	}
}
