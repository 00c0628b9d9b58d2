package index

// holderID names one (endpoint, data-parallel rank): the interned endpoint id
// in the high 24 bits and the rank in the low 8, so Lookup gets the endpoint
// of an entry without a table lookup.
type holderID uint32

func makeHolder(endpoint uint32, rank int) holderID { return holderID(endpoint<<8 | uint32(rank)) }

func (h holderID) endpoint() uint32 { return uint32(h) >> 8 }

// entry is one holder's confirmed copies of one key, 12 bytes. A key's
// entries form a singly linked list headed from its keyTable slot, which also
// carries the key's recency stamp.
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
// from key to the head of its entry list, plus a chunked entry slab with a free
// list, so steady-state updates allocate nothing. It is not safe for
// concurrent use; shard wraps it with a lock.
type core struct {
	keys      keyTable // key -> 1-based head entry and recency
	chunks    [][]entry
	size      uint32 // entries ever allocated
	freeEntry uint32 // 1-based head of the free entry list
	nEntries  int
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

// find returns the 1-based index of h's entry in the list starting at head,
// and the entry before it (0 when first), or 0 when h holds no copy.
func (c *core) find(head uint32, h holderID) (at, prev uint32) {
	for i := head; i != 0; i = c.at(i).next {
		if c.at(i).holder == h {
			return i, prev
		}
		prev = i
	}
	return 0, 0
}

// add records one more copy of key on medium m for h and stamps the key as
// used. It reports whether the holder's entry is new.
func (c *core) add(key Key, h holderID, m Medium, tick uint32) bool {
	e, created := c.holderEntry(key, h, tick)
	e.refs.add(m)
	return created
}

// holderEntry finds h's entry for key, creating it when h held none, and
// stamps the key as used. created reports a new entry.
func (c *core) holderEntry(key Key, h holderID, tick uint32) (e *entry, created bool) {
	slot, found := c.keys.claim(key, tick)
	var head uint32
	if found {
		head = slot.head
	}
	at, _ := c.find(head, h)
	created = at == 0
	if created { // always when the key is new: its claimed slot gets its head here
		at = c.newEntry(entry{holder: h, next: head})
		slot.head = at
		c.nEntries++
	}
	stampLocked(slot, tick)
	return c.at(at), created
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
	// here is unlinked by index (unlinkAt), not probed for again.
	p := c.keys.part(key)
	i, ok := p.find(key)
	if !ok {
		return false, false
	}
	return c.removeFound(key, p, i, h, m)
}

// removeHinted is remove for a key that an earlier probe found at slot i
// of its part; writes since may have moved it (a growth, a backward shift),
// so the slot is checked, and the key probed for if it moved.
func (c *core) removeHinted(key Key, i uint64, h holderID, m Medium) (found, gone bool) {
	p := c.keys.part(key)
	if i >= uint64(len(p.slots)) || p.slots[i].head == 0 || p.slots[i].key != key {
		return c.remove(key, h, m)
	}
	return c.removeFound(key, p, i, h, m)
}

// removeFound is remove once key's slot is known: slot i of part p.
func (c *core) removeFound(key Key, p *flatKeys, i uint64, h holderID, m Medium) (found, gone bool) {
	at, prev := c.find(p.slots[i].head, h)
	if at == 0 || !c.at(at).refs.remove(m) {
		return false, false
	}
	if c.at(at).refs.total() > 0 {
		return true, false
	}
	c.unlinkAt(p, i, at, prev)
	return true, true
}

// drop removes h's entry for key whatever its counts; it reports whether there
// was one.
func (c *core) drop(key Key, h holderID) bool {
	at, prev := c.find(c.keys.head(key), h)
	if at == 0 {
		return false
	}
	c.unlink(key, at, prev)
	return true
}

// holdsOn reports whether h has a confirmed copy of key on medium m.
func (c *core) holdsOn(key Key, h holderID, m Medium) bool {
	at, _ := c.find(c.keys.head(key), h)
	return at != 0 && c.at(at).refs[m] > 0
}

// touch stamps key as used, when it is present; the caller holds the shard's
// write lock.
func (c *core) touch(key Key, tick uint32) {
	if slot := c.keys.slot(key); slot != nil {
		stampLocked(slot, tick) // callers hold the write lock
	}
}

// holds reports whether h has a confirmed copy of key.
func (c *core) holds(key Key, h holderID) bool {
	at, _ := c.find(c.keys.head(key), h)
	return at != 0
}

// holdsEndpoint reports whether any rank of endpoint ep has a confirmed copy.
func (c *core) holdsEndpoint(key Key, ep uint32) bool {
	for i := c.keys.head(key); i != 0; i = c.at(i).next {
		if c.at(i).holder.endpoint() == ep {
			return true
		}
	}
	return false
}

func (c *core) unlink(key Key, at, prev uint32) {
	if prev != 0 {
		c.at(prev).next = c.at(at).next
		c.free(at)
		return
	}
	p := c.keys.part(key)
	i, _ := p.find(key)
	c.unlinkAt(p, i, at, prev)
}

// unlinkAt is unlink for a key whose slot is slot i of part p (what
// p.find returned for it), without probing for the slot again.
func (c *core) unlinkAt(p *flatKeys, i uint64, at, prev uint32) {
	e := c.at(at)
	switch {
	case prev != 0:
		c.at(prev).next = e.next
	case e.next == 0:
		c.keys.removeAt(p, i)
	default:
		p.slots[i].head = e.next // the stamp stays with the key
	}
	c.free(at)
}

// free puts entry at, unlinked, on the free list.
func (c *core) free(at uint32) {
	*c.at(at) = entry{next: c.freeEntry}
	c.freeEntry = at
	c.nEntries--
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
