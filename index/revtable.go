package index

import (
	"unsafe"

	"github.com/warmroute/warmroute/internal/prefetch"
)

// revSlot maps one engine block hash to the key it was stored under.
type revSlot struct {
	hash uint64
	key  Key
}

// revTable is a holder's engine-hash to key map, which BlockRemoved needs:
// the same flat open-addressing layout as keyTable (16-byte slots, linear
// probing, backward-shift deletion, grown past 13/16 full), about half the
// cost of a Go map per operation. It is split into revParts parts so that a
// growth copies a sixteenth of the holder's entries (about 17 ms rather than
// 0.4 s at 10M on the benchmark machine), delaying that engine's events
// less. Hash 0 marks a free slot; the entry for engine hash 0 itself lives
// beside the parts. The zero value is an empty table. Not safe for
// concurrent use: the holder's mutex guards it.
type revTable struct {
	parts   [revParts]flatRev
	hasZero bool
	zeroKey Key
}

const revParts = 16

// mix spreads engine hashes, which are not guaranteed uniform (tests and some
// engines count): bits 32-35 of the product choose the part and its top bits
// the slot, so the two are independent for any part under 2^28 slots.
func mix(h uint64) uint64 { return h * 0x9e3779b97f4a7c15 }

func (t *revTable) part(h uint64) *flatRev { return &t.parts[(mix(h)>>32)&(revParts-1)] }

func (t *revTable) len() int {
	n := 0
	for i := range t.parts {
		n += t.parts[i].n
	}
	if t.hasZero {
		n++
	}
	return n
}

func (t *revTable) get(h uint64) (Key, bool) {
	if h == 0 {
		return t.zeroKey, t.hasZero
	}
	return t.part(h).get(h)
}

// prefetchAll prefetches the home slot of every hash (and the slot after
// it, as keyTable.prefetch does), so that their cache misses overlap before
// the probes that need them (see probeBatch).
func (t *revTable) prefetchAll(hashes []uint64) {
	for _, h := range hashes {
		p := t.part(h)
		if len(p.slots) != 0 {
			i := p.home(h)
			a, b := unsafe.Pointer(&p.slots[i]), unsafe.Pointer(&p.slots[(i+1)&p.mask()])
			prefetch.Line(a)
			if prefetch.OtherLine(a, b) { // three slots in four share their line with the next
				prefetch.Line(b)
			}
		}
	}
}

// prefetchRun prefetches, for deleteAt(h, at), slot at and the slots after
// it that the deletion's backward shift reads (3.5 on average in
// BenchmarkIngest/steady's tables, 4.5 counting the free one that ends the
// run): at's line and at+4's, the next one of 16-byte slots. The plan's
// deletions come after its shards' writes, by which time the lines its
// lookups read may have left the nearer caches.
func (t *revTable) prefetchRun(h uint64, at uint64) {
	if h == 0 {
		return
	}
	p := t.part(h)
	if at < uint64(len(p.slots)) {
		prefetch.Line(unsafe.Pointer(&p.slots[at]))
		prefetch.Line(unsafe.Pointer(&p.slots[(at+4)&p.mask()]))
	}
}

// swap maps h to key and returns what h mapped to before, as a get
// followed by a put would, with one probe.
func (t *revTable) swap(h uint64, key Key) (old Key, ok bool) {
	if h == 0 {
		old, ok = t.zeroKey, t.hasZero
		t.hasZero, t.zeroKey = true, key
		return old, ok
	}
	return t.part(h).swap(h, key)
}

// lookup is get that also returns where h's slot is, for deleteAt.
func (t *revTable) lookup(h uint64) (key Key, at uint64, ok bool) {
	if h == 0 {
		return t.zeroKey, 0, t.hasZero
	}
	p := t.part(h)
	i, ok := p.find(h)
	if !ok {
		return 0, 0, false
	}
	return p.slots[i].key, i, true
}

// deleteAt deletes h, which lookup found at slot at: deletions since may
// have shifted it back, so at is checked before it is used.
func (t *revTable) deleteAt(h uint64, at uint64) {
	if h == 0 {
		t.hasZero, t.zeroKey = false, 0
		return
	}
	p := t.part(h)
	if at < uint64(len(p.slots)) && p.slots[at].hash == h {
		p.deleteSlot(at)
		return
	}
	p.delete(h)
}

func (t *revTable) put(h uint64, key Key) {
	if h == 0 {
		t.hasZero, t.zeroKey = true, key
		return
	}
	t.part(h).put(h, key)
}

func (t *revTable) delete(h uint64) {
	if h == 0 {
		t.hasZero, t.zeroKey = false, 0
		return
	}
	t.part(h).delete(h)
}

// all calls f with every entry.
func (t *revTable) all(f func(h uint64, key Key)) {
	if t.hasZero {
		f(0, t.zeroKey)
	}
	for i := range t.parts {
		t.parts[i].all(f)
	}
}

// keepIf drops every entry for which keep returns false, rebuilding each part
// at the size its survivors need, so compaction also returns memory.
func (t *revTable) keepIf(keep func(h uint64, key Key) bool) {
	if t.hasZero && !keep(0, t.zeroKey) {
		t.hasZero, t.zeroKey = false, 0
	}
	for i := range t.parts {
		t.parts[i].keepIf(keep)
	}
}

// flatRev is one part of a revTable, for non-zero hashes only.
type flatRev struct {
	slots []revSlot
	shift uint8 // 64 - log2(len(slots))
	n     int
}

func (t *flatRev) home(h uint64) uint64 { return mix(h) >> t.shift }

func (t *flatRev) mask() uint64 { return uint64(len(t.slots) - 1) }

// find returns h's slot index and whether h is present.
func (t *flatRev) find(h uint64) (uint64, bool) {
	if t.n == 0 {
		return 0, false
	}
	m := t.mask()
	for i := t.home(h); ; i = (i + 1) & m {
		switch t.slots[i].hash {
		case 0:
			return 0, false
		case h:
			return i, true
		}
	}
}

func (t *flatRev) get(h uint64) (Key, bool) {
	if i, ok := t.find(h); ok {
		return t.slots[i].key, true
	}
	return 0, false
}

func (t *flatRev) swap(h uint64, key Key) (Key, bool) {
	if (t.n+1)*maxLoadDen > len(t.slots)*maxLoadNum {
		t.resize(max(minKeySlots, 2*len(t.slots)))
	}
	m := t.mask()
	for i := t.home(h); ; i = (i + 1) & m {
		s := &t.slots[i]
		if s.hash == 0 {
			*s = revSlot{h, key}
			t.n++
			return 0, false
		}
		if s.hash == h {
			old := s.key
			s.key = key
			return old, true
		}
	}
}

func (t *flatRev) put(h uint64, key Key) { t.swap(h, key) }

// resize moves every entry into a new array of size slots (a power of two
// large enough for them).
func (t *flatRev) resize(size int) {
	old := t.slots
	t.slots = make([]revSlot, size)
	t.shift = uint8(64 - log2(size))
	m := t.mask()
	for _, s := range old {
		if s.hash == 0 {
			continue
		}
		i := t.home(s.hash)
		for t.slots[i].hash != 0 {
			i = (i + 1) & m
		}
		t.slots[i] = s
	}
}

func log2(n int) int {
	b := 0
	for 1<<b < n {
		b++
	}
	return b
}

func (t *flatRev) delete(h uint64) {
	if hole, ok := t.find(h); ok {
		t.deleteSlot(hole)
	}
}

// deleteSlot deletes the occupied slot hole.
func (t *flatRev) deleteSlot(hole uint64) {
	m := t.mask()
	for j := (hole + 1) & m; t.slots[j].hash != 0; j = (j + 1) & m {
		// As in flatKeys.remove: j may fill the hole unless its home lies
		// cyclically in (hole, j].
		if (j-t.home(t.slots[j].hash))&m >= (j-hole)&m {
			t.slots[hole] = t.slots[j]
			hole = j
		}
	}
	t.slots[hole] = revSlot{}
	t.n--
}

func (t *flatRev) all(f func(h uint64, key Key)) {
	for _, s := range t.slots {
		if s.hash != 0 {
			f(s.hash, s.key)
		}
	}
}

func (t *flatRev) keepIf(keep func(h uint64, key Key) bool) {
	old := t.slots
	*t = flatRev{}
	for _, s := range old {
		if s.hash != 0 && keep(s.hash, s.key) {
			t.put(s.hash, s.key)
		}
	}
}
