package index

import (
	"math/rand/v2"
	"sync/atomic"
	"unsafe"
)

// keySlot is one key of a table: its key, a head that is not 0 (0 marks a
// free slot; see holderSlot and specTable for what it holds) and its recency
// stamp. Keeping the stamp here rather than in an entry means Lookup touches
// a line it already loaded.
type keySlot struct {
	key  Key
	head uint32
	used uint32 // recency tick; accessed atomically (Lookup writes it under a read lock)
}

// slotType is what a keyTable's slots may be: a bare keySlot (the
// prediction heads) or a holderSlot (the confirmed keys, with inline
// holders). Both begin with a keySlot, which the table's code reaches
// through header; a slot is occupied when its header's head is not 0.
type slotType interface{ keySlot | holderSlot }

// header returns the keySlot at the start of s. Go has no field access on
// type parameters, and a method on them is called through the generic
// dictionary (not inlined), so the table's hot loops read the shared
// header through this conversion.
func header[S slotType](s *S) *keySlot { return (*keySlot)(unsafe.Pointer(s)) }

// The conversion needs the header at offset 0: any other offset makes this
// constant negative, which does not compile.
const _ uintptr = 0 - unsafe.Offsetof(holderSlot{}.keySlot)

// keyTable maps a shard's keys to their slots (a confirmed key's slot holds
// its first two holders; a prediction head's only its list). It is split into
// keyParts flat tables chosen by key bits the shard and slot indexes do not
// use, so that growing one (a copy under the shard's write lock) moves a
// sixteenth of the shard: a few hundred microseconds at 10M keys rather than
// several milliseconds.
type keyTable[S slotType] struct {
	parts [keyParts]flatKeys[S]
	n     int
}

const keyParts = 16

func (t *keyTable[S]) part(k Key) *flatKeys[S] { return &t.parts[(uint64(k)>>32)&(keyParts-1)] }

func (t *keyTable[S]) len() int { return t.n }

func (t *keyTable[S]) slot(k Key) *S { return t.part(k).slot(k) }

func (t *keyTable[S]) head(k Key) uint32 { return t.part(k).head(k) }

// put sets key's head, inserting the key (with stamp tick) when absent, and
// returns its slot. head must not be 0.
func (t *keyTable[S]) put(k Key, head, tick uint32) *S {
	p := t.part(k)
	before := p.n
	s := p.put(k, head, tick)
	t.n += p.n - before
	return s
}

// claim returns key's slot with one probe, inserting the key (stamped
// tick, head 0) when absent; found says it was there. A claimed slot must get
// its head set before the shard's lock is released: head 0 marks a free slot.
func (t *keyTable[S]) claim(k Key, tick uint32) (s *S, found bool) {
	p := t.part(k)
	if (p.n+1)*maxLoadDen > len(p.slots)*maxLoadNum {
		p.grow()
	}
	for i := uint64(k) & p.mask; ; i = (i + 1) & p.mask {
		s := &p.slots[i]
		h := header(s)
		if h.head == 0 {
			*s = *new(S) // a freed slot is already zero; this keeps claim independent of that
			h.key, h.used = k, tick
			p.n++
			t.n++
			return s, false
		}
		if h.key == k {
			return s, true
		}
	}
}

func (t *keyTable[S]) remove(k Key) {
	p := t.part(k)
	before := p.n
	p.remove(k)
	t.n += p.n - before
}

// removeAt deletes the key in slot i of part p (p is t.part(key), i what
// p.find returned), without probing for it again.
func (t *keyTable[S]) removeAt(p *flatKeys[S], i uint64) {
	p.removeAt(i)
	t.n--
}

// sample calls f with up to n occupied slots, starting at a random slot of a
// random part; it stops early when f returns false.
func (t *keyTable[S]) sample(n int, f func(*S) bool) {
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
func (t *keyTable[S]) all(f func(Key, uint32)) {
	for i := range t.parts {
		t.parts[i].all(f)
	}
}

// flatKeys is one part of a keyTable: open addressing with linear probing
// over one flat array, so a probe is one dependent memory load (a Go map
// takes several: header, directory, table, group) and a key costs its slot
// (16 bytes, or 32 with inline holders) divided by the load factor. Keys are
// hash outputs, so the low bits index the array as they are. Deletion shifts
// the following run back rather than leaving tombstones, so probe lengths
// never degrade. Growth doubles the array and reinserts every key.
//
// Not safe for concurrent use beyond what core documents: readers may only
// touch stamps.
type flatKeys[S slotType] struct {
	slots []S
	mask  uint64
	n     int
}

const (
	minKeySlots = 16
	// A table grows past 13/16 full: linear probing stays short (a hit
	// probes about three slots, a miss a few cache lines) while an average
	// table, between 13/32 and 13/16 full, costs about 1.6 slots a key
	// (26 bytes for a 16-byte slot, 52 for a holderSlot).
	maxLoadNum, maxLoadDen = 13, 16
)

// find returns key's slot index and whether the key is present.
func (t *flatKeys[S]) find(key Key) (uint64, bool) {
	if t.n == 0 {
		return 0, false
	}
	for i := uint64(key) & t.mask; ; i = (i + 1) & t.mask {
		s := header(&t.slots[i])
		if s.head == 0 {
			return 0, false
		}
		if s.key == key {
			return i, true
		}
	}
}

// slot returns key's slot, or nil when the key is absent.
func (t *flatKeys[S]) slot(key Key) *S {
	if i, ok := t.find(key); ok {
		return &t.slots[i]
	}
	return nil
}

// head returns key's head (see keySlot), or 0 when key is absent.
func (t *flatKeys[S]) head(key Key) uint32 {
	if s := t.slot(key); s != nil {
		return header(s).head
	}
	return 0
}

// put sets key's head, inserting the key (with stamp tick) when absent, and
// returns its slot. head must not be 0.
func (t *flatKeys[S]) put(key Key, head, tick uint32) *S {
	if (t.n+1)*maxLoadDen > len(t.slots)*maxLoadNum {
		t.grow()
	}
	for i := uint64(key) & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		h := header(s)
		if h.head == 0 {
			*s = *new(S)
			h.key, h.head, h.used = key, head, tick
			t.n++
			return s
		}
		if h.key == key {
			h.head = head
			return s
		}
	}
}

func (t *flatKeys[S]) grow() { t.resize(max(minKeySlots, 2*len(t.slots))) }

// reserve grows t so that n keys, of which some may already be there
// (other holders' copies of the same blocks), fit without another growth:
// it sizes for the larger of n and what t holds, never for their sum, so
// a replace of keys mostly present does not double a table for good; new
// keys beyond that cost at most one ordinary growth.
func (t *flatKeys[S]) reserve(n int) {
	size := max(minKeySlots, len(t.slots))
	for max(t.n, n)*maxLoadDen > size*maxLoadNum {
		size *= 2
	}
	if size > len(t.slots) {
		t.resize(size)
	}
}

// resize moves every key into a new array of size slots (a power of two).
func (t *flatKeys[S]) resize(size int) {
	old := t.slots
	t.slots, t.mask = make([]S, size), uint64(size-1)
	for j := range old {
		h := header(&old[j])
		if h.head == 0 {
			continue
		}
		i := uint64(h.key) & t.mask
		for header(&t.slots[i]).head != 0 {
			i = (i + 1) & t.mask
		}
		t.slots[i] = old[j]
	}
}

// remove deletes key, shifting back any later slot of the same run whose
// home position the hole now precedes, so no lookup ever stops early.
func (t *flatKeys[S]) remove(key Key) {
	if hole, ok := t.find(key); ok {
		t.removeAt(hole)
	}
}

// removeAt deletes the occupied slot hole, as remove does once it has found
// it.
func (t *flatKeys[S]) removeAt(hole uint64) {
	for j := (hole + 1) & t.mask; header(&t.slots[j]).head != 0; j = (j + 1) & t.mask {
		home := uint64(header(&t.slots[j]).key) & t.mask
		// The slot at j may fill the hole unless its home lies cyclically
		// in (hole, j]: then a probe from home would never pass the hole.
		if (j-home)&t.mask >= (j-hole)&t.mask {
			t.slots[hole] = t.slots[j]
			hole = j
		}
	}
	t.slots[hole] = *new(S)
	t.n--
}

// sample calls f with up to n occupied slots, starting at a random position.
// It returns how many it visited and whether f stopped it.
func (t *flatKeys[S]) sample(n int, f func(*S) bool) (seen int, stopped bool) {
	if t.n == 0 {
		return 0, false
	}
	start := rand.Uint64() & t.mask
	for k := uint64(0); k <= t.mask && seen < n; k++ {
		s := &t.slots[(start+k)&t.mask]
		if header(s).head == 0 {
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
func (t *flatKeys[S]) all(f func(Key, uint32)) {
	for i := range t.slots {
		if s := header(&t.slots[i]); s.head != 0 {
			f(s.key, s.head)
		}
	}
}

func touchSlot(s *keySlot, tick uint32) {
	if atomic.LoadUint32(&s.used) != tick {
		atomic.StoreUint32(&s.used, tick)
	}
}
