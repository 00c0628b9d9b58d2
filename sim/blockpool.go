package sim

// blockID indexes a block in its pool; noBlock ends the LRU links.
type blockID int32

const noBlock blockID = -1

// poolBlock is one KV block slot. A slot is free (no hash, no refs), in use
// (refs > 0, maybe cached) or cached and evictable (refs == 0, in the LRU).
type poolBlock struct {
	hash       digest
	parent     digest
	hasParent  bool
	cached     bool
	tokens     []int
	lora       string
	refs       int
	prev, next blockID
}

// blockPool is vLLM's KV block pool reduced to what prefix caching needs:
// a fixed number of block slots, a hash table of full cached blocks, reference
// counts held by running requests and an LRU of cached blocks nobody uses,
// evicted oldest first when a free slot is needed.
//
// It is a single-threaded core (kvCache locks around it): not safe for
// concurrent use, and the zero value is not usable; use newBlockPool.
type blockPool struct {
	blockSize int
	blocks    []poolBlock
	free      []blockID // slots holding nothing, reused last-freed first
	head      blockID   // least recently released cached block: evicted first
	tail      blockID
	byHash    map[digest][]blockID // duplicates: concurrent requests may compute the same block
	used      int                  // slots with refs > 0
}

func newBlockPool(blockSize, numBlocks int) *blockPool {
	p := &blockPool{blockSize: blockSize}
	p.clear(numBlocks)
	return p
}

// clear forgets every block, referenced or not.
func (p *blockPool) clear(numBlocks int) {
	p.blocks = make([]poolBlock, numBlocks)
	p.free = make([]blockID, numBlocks)
	for i := range p.free {
		p.free[i] = blockID(numBlocks - 1 - i) // pop order 0, 1, 2...
		p.blocks[i].prev, p.blocks[i].next = noBlock, noBlock
	}
	p.head, p.tail = noBlock, noBlock
	p.byHash = map[digest][]blockID{}
	p.used = 0
}

// match references the cached blocks for the longest prefix of hashes and
// returns them; the caller releases them when its request ends.
func (p *blockPool) match(hashes []digest) []blockID {
	var ids []blockID
	for _, h := range hashes {
		found := p.byHash[h]
		if len(found) == 0 {
			break
		}
		p.ref(found[0])
		ids = append(ids, found[0])
	}
	return ids
}

func (p *blockPool) ref(id blockID) {
	b := &p.blocks[id]
	if b.refs == 0 {
		p.used++
		if b.cached {
			p.unlink(id)
		}
	}
	b.refs++
}

// allocate takes a slot for a new block, evicting the least recently
// released cached block when no slot is free. evicted is that block's
// digest; ok is false when every slot is referenced.
func (p *blockPool) allocate() (id blockID, evicted *digest, ok bool) {
	if n := len(p.free); n > 0 {
		id = p.free[n-1]
		p.free = p.free[:n-1]
	} else if p.head != noBlock {
		id = p.head
		h := p.blocks[id].hash
		p.unlink(id)
		p.uncache(id)
		evicted = &h
	} else {
		return noBlock, nil, false
	}
	p.blocks[id].refs = 1
	p.used++
	return id, evicted, true
}

// commit makes the referenced block id findable under hash.
func (p *blockPool) commit(id blockID, hash digest, parent *digest, tokens []int, lora string) {
	b := &p.blocks[id]
	b.hash, b.cached, b.lora = hash, true, lora
	b.tokens = append(b.tokens[:0], tokens...)
	b.hasParent = parent != nil
	if parent != nil {
		b.parent = *parent
	}
	p.byHash[hash] = append(p.byHash[hash], id)
}

func (p *blockPool) uncache(id blockID) {
	b := &p.blocks[id]
	ids := p.byHash[b.hash]
	for i, x := range ids {
		if x == id {
			ids = append(ids[:i], ids[i+1:]...)
			break
		}
	}
	if len(ids) == 0 {
		delete(p.byHash, b.hash)
	} else {
		p.byHash[b.hash] = ids
	}
	b.cached, b.hasParent, b.tokens, b.lora = false, false, b.tokens[:0], ""
}

// release drops one reference to each of ids. Like vLLM, a request's blocks
// are released last block first, so that its tail is evicted before the
// prefix it shares with other requests.
func (p *blockPool) release(ids []blockID) {
	for i := len(ids) - 1; i >= 0; i-- {
		id := ids[i]
		b := &p.blocks[id]
		if b.refs--; b.refs > 0 {
			continue
		}
		p.used--
		if b.cached {
			p.pushTail(id)
		} else {
			p.free = append(p.free, id)
		}
	}
}

func (p *blockPool) pushTail(id blockID) {
	b := &p.blocks[id]
	b.prev, b.next = p.tail, noBlock
	if p.tail != noBlock {
		p.blocks[p.tail].next = id
	} else {
		p.head = id
	}
	p.tail = id
}

func (p *blockPool) unlink(id blockID) {
	b := &p.blocks[id]
	if b.prev != noBlock {
		p.blocks[b.prev].next = b.next
	} else {
		p.head = b.next
	}
	if b.next != noBlock {
		p.blocks[b.next].prev = b.prev
	} else {
		p.tail = b.prev
	}
	b.prev, b.next = noBlock, noBlock
}

// usage is the fraction of slots referenced by running requests, which is
// what vLLM reports as kv_cache_usage_perc: cached blocks nobody uses count
// as free because they can be evicted at any time.
func (p *blockPool) usage() float64 {
	if len(p.blocks) == 0 {
		return 0
	}
	return float64(p.used) / float64(len(p.blocks))
}

// evictionOrder lists the evictable cached blocks, next victim first.
func (p *blockPool) evictionOrder() []blockID {
	var ids []blockID
	for id := p.head; id != noBlock; id = p.blocks[id].next {
		ids = append(ids, id)
	}
	return ids
}
