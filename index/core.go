package index

// holderID names one (endpoint, data-parallel rank): the interned endpoint id
// in the high 24 bits and the rank in the low 8, so Lookup gets the endpoint
// of an entry without a table lookup.
type holderID uint32

func makeHolder(endpoint uint32, rank int) holderID { return holderID(endpoint<<8 | uint32(rank)) }

func (h holderID) endpoint() uint32 { return uint32(h) >> 8 }

// holderSlot is one key of a shard's confirmed table, 32 bytes (two to a
// cache line): the key's keySlot and the entries of its first two holders
// inline, so a Lookup or an event finds a key held once or twice in the one
// line its probe loaded. Its head is occupiedBit with, below it, the 1-based
// head of a list of further holders' entries in the slab (0: none). The
// entries stay compact: in[1] is used only when in[0] is, and the list is
// not empty only when both are; a removal moves entries up to keep it so.
type holderSlot struct {
	keySlot
	in [2]inlineEntry
}

// inlineEntry is one holder's confirmed copies of a key, inside its slot.
type inlineEntry struct {
	h    uint32 // the holderID + 1; 0 marks an unused place
	refs refs
}

// occupiedBit marks a holderSlot in use whatever its overflow list, since a
// head of 0 marks a free slot. Entry indexes stay below it (a shard would
// need 2^31 entries, 24 GiB of slab, to reach it).
const occupiedBit = 1 << 31

// overflowOf returns the 1-based index of s's first overflow entry, or 0.
func overflowOf(s *holderSlot) uint32 { return s.head &^ occupiedBit }

// holder returns the holder of inline entry e (which must be used).
func (e *inlineEntry) holder() holderID { return holderID(e.h - 1) }

// inlineID is what an inline entry stores for h: never 0, which marks an
// unused place (maxEndpoints keeps h+1 from wrapping).
func inlineID(h holderID) uint32 { return uint32(h) + 1 }

// entry is one holder's confirmed copies of one key beyond its slot's two
// inline places, 12 bytes, on a singly linked list headed from the slot.
type entry struct {
	holder holderID
	next   uint32 // 1-based; 0 ends the list (or the free list)
	refs   refs
}

// chunkBits sizes the entry slab's chunks (4096 entries, 64 KiB). A chunked
// slab never copies on growth, so no write holds a shard lock for a large
// copy, and it wastes at most one chunk instead of append's up-to-half.
const chunkBits = 12

// core is the single-threaded confirmed-block table of one shard: a table
// from key to its holders (two inline, more on a list in a chunked entry
// slab with a free list), so steady-state updates allocate nothing. It is
// not safe for concurrent use; shard wraps it with a lock.
type core struct {
	keys      keyTable[holderSlot] // key -> holders and recency
	chunks    [][]entry
	size      uint32 // entries ever allocated
	freeEntry uint32 // 1-based head of the free entry list
	nEntries  int    // holder entries, inline and in the slab
	spec      specTable
	evictFn   func(holderID) // told about each entry lost to eviction
}

func newCore(evictFn func(holderID)) core {
	return core{spec: newSpecTable(), evictFn: evictFn}
}

// at returns the entry with 1-based index i.
func (c *core) at(i uint32) *entry {
	return &c.chunks[(i-1)>>chunkBits][(i-1)&(1<<chunkBits-1)]
}

// refsOf returns h's copies in slot s, or nil when h holds none.
func (c *core) refsOf(s *holderSlot, h holderID) *refs {
	id := inlineID(h)
	if s.in[0].h == id {
		return &s.in[0].refs
	}
	if s.in[1].h == id {
		return &s.in[1].refs
	}
	for i := overflowOf(s); i != 0; i = c.at(i).next {
		if e := c.at(i); e.holder == h {
			return &e.refs
		}
	}
	return nil
}

// refsFor is refsOf for key, which may be absent.
func (c *core) refsFor(key Key, h holderID) *refs {
	if s := c.keys.slot(key); s != nil {
		return c.refsOf(s, h)
	}
	return nil
}

// add records one more copy of key on medium m for h and stamps the key as
// used. It reports whether the holder's entry is new.
func (c *core) add(key Key, h holderID, m Medium, tick uint32) bool {
	r, created := c.holderEntry(key, h, tick)
	r.add(m)
	return created
}

// holderEntry finds h's copies of key, giving h an empty entry when it held
// none, and stamps the key as used. created reports a new entry. The
// pointer is valid until the shard's next write.
func (c *core) holderEntry(key Key, h holderID, tick uint32) (r *refs, created bool) {
	slot, found := c.keys.claim(key, tick)
	if found {
		r = c.refsOf(slot, h)
	} else {
		slot.head = occupiedBit // claimed: its head is set before the lock is released
	}
	if created = r == nil; created {
		r = c.attach(slot, h)
		c.nEntries++
	}
	stampLocked(&slot.keySlot, tick)
	return r, created
}

// attach gives h, which holds no copy in s, an empty entry: inline when a
// place is free, else at the head of the overflow list.
func (c *core) attach(s *holderSlot, h holderID) *refs {
	for j := range s.in {
		if s.in[j].h == 0 {
			s.in[j] = inlineEntry{h: inlineID(h)}
			return &s.in[j].refs
		}
	}
	at := c.newEntry(entry{holder: h, next: overflowOf(s)})
	s.head = occupiedBit | at
	return &c.at(at).refs
}

// stampLocked stamps a slot as used at tick. Every core write holds the
// shard's write lock, which excludes the readers that stamp slots atomically
// (touchSlot, under the read lock), so a plain store suffices; on x86 an
// atomic store is an exchange, a full fence that would wait for the batch's
// outstanding probes (see probeBatch) once per block.
func stampLocked(s *keySlot, tick uint32) {
	if s.used != tick {
		s.used = tick
	}
}

// remove drops one copy of key on m for h. found is false when h held no copy
// on m; gone is true when h's entry ended.
func (c *core) remove(key Key, h holderID, m Medium) (found, gone bool) {
	// One probe of the key table serves the whole removal: the slot found
	// here is detached by index, not probed for again.
	p := c.keys.part(key)
	i, ok := p.find(key)
	if !ok {
		return false, false
	}
	return c.removeFound(p, i, h, m)
}

// removeHinted is remove for a key that an earlier probe found at slot i
// of its part; writes since may have moved it (a growth, a backward shift),
// so the slot is checked, and the key probed for if it moved.
func (c *core) removeHinted(key Key, i uint64, h holderID, m Medium) (found, gone bool) {
	p := c.keys.part(key)
	if i >= uint64(len(p.slots)) || p.slots[i].head == 0 || p.slots[i].key != key {
		return c.remove(key, h, m)
	}
	return c.removeFound(p, i, h, m)
}

// removeFound is remove once key's slot is known: slot i of part p.
func (c *core) removeFound(p *flatKeys[holderSlot], i uint64, h holderID, m Medium) (found, gone bool) {
	r := c.refsOf(&p.slots[i], h)
	if r == nil || !r.remove(m) {
		return false, false
	}
	if r.total() > 0 {
		return true, false
	}
	c.detach(p, i, h)
	return true, true
}

// drop removes h's entry for key whatever its counts; it reports whether there
// was one.
func (c *core) drop(key Key, h holderID) bool {
	p := c.keys.part(key)
	i, ok := p.find(key)
	if !ok || c.refsOf(&p.slots[i], h) == nil {
		return false
	}
	c.detach(p, i, h)
	return true
}

// holdsOn reports whether h has a confirmed copy of key on medium m.
func (c *core) holdsOn(key Key, h holderID, m Medium) bool {
	r := c.refsFor(key, h)
	return r != nil && r[m] > 0
}

// touch stamps key as used, when it is present; the caller holds the shard's
// write lock.
func (c *core) touch(key Key, tick uint32) {
	if slot := c.keys.slot(key); slot != nil {
		stampLocked(&slot.keySlot, tick) // callers hold the write lock
	}
}

// holds reports whether h has a confirmed copy of key.
func (c *core) holds(key Key, h holderID) bool { return c.refsFor(key, h) != nil }

// holdsEndpoint reports whether any rank of endpoint ep has a confirmed copy.
func (c *core) holdsEndpoint(key Key, ep uint32) bool {
	s := c.keys.slot(key)
	if s == nil {
		return false
	}
	for j := range s.in {
		if s.in[j].h != 0 && s.in[j].holder().endpoint() == ep {
			return true
		}
	}
	for i := overflowOf(s); i != 0; i = c.at(i).next {
		if c.at(i).holder.endpoint() == ep {
			return true
		}
	}
	return false
}

// detach removes h's entry (h must hold one) from slot i of part p, where
// find put key. An inline place it frees takes the first overflow entry, so
// the slot stays compact; a key left without holders leaves the table.
func (c *core) detach(p *flatKeys[holderSlot], i uint64, h holderID) {
	s := &p.slots[i]
	c.nEntries--
	switch inlineID(h) {
	case s.in[0].h:
		s.in[0] = s.in[1]
		c.refill(s)
	case s.in[1].h:
		c.refill(s)
	default:
		prev := uint32(0)
		for at := overflowOf(s); at != 0; prev, at = at, c.at(at).next {
			if e := c.at(at); e.holder == h {
				if prev == 0 {
					s.head = occupiedBit | e.next
				} else {
					c.at(prev).next = e.next
				}
				c.free(at)
				return
			}
		}
		panic("index: detach of a holder the key does not have")
	}
	if s.in[0].h == 0 {
		c.keys.removeAt(p, i)
	}
}

// refill fills s.in[1], just vacated, with the first overflow entry (freeing
// it), or marks it unused when there is none.
func (c *core) refill(s *holderSlot) {
	at := overflowOf(s)
	if at == 0 {
		s.in[1] = inlineEntry{}
		return
	}
	e := c.at(at)
	s.in[1] = inlineEntry{h: inlineID(e.holder), refs: e.refs}
	s.head = occupiedBit | e.next
	c.free(at)
}

// free puts slab entry at, unlinked, on the free list.
func (c *core) free(at uint32) {
	*c.at(at) = entry{next: c.freeEntry}
	c.freeEntry = at
}

func (c *core) newEntry(e entry) uint32 {
	if at := c.freeEntry; at != 0 {
		c.freeEntry = c.at(at).next
		*c.at(at) = e
		return at
	}
	if c.size&(1<<chunkBits-1) == 0 {
		c.chunks = append(c.chunks, make([]entry, 1<<chunkBits))
	}
	c.size++
	*c.at(c.size) = e
	return c.size
}
