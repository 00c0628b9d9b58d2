package index

import "fmt"

// Rebuild is the confirmed state of one (endpoint, rank) rebuilt from a
// snapshot of its engine's blocks: keyed from their tokens and parents as
// they are added, without any of the index's locks, then swapped in by
// Replace. Add blocks parents first. A Rebuild is not safe for concurrent
// use; build it with NewRebuild.
type Rebuild struct {
	blockSize int
	model     string
	rev       revTable // engine hash -> key of the held blocks
	// want maps each held key to its copies per medium, packed into the
	// value's low 32 bits (a revTable keyed by the key: the same flat table).
	want  revTable
	chain map[uint64]Key // chain-only blocks: the engine no longer holds them
	roots map[string]Key // chain roots by adapter
	buf   []Key
	// Held, ChainOnly, UnknownParent and Skipped count what Add took: held
	// blocks, chain-only blocks, blocks whose parent was not in the
	// snapshot (keyed as chain starts, as a live Store does), and blocks of
	// another block size than the index's (not keyed).
	Held, ChainOnly, UnknownParent, Skipped int
}

// RebuildBlock is one block of a snapshot.
type RebuildBlock struct {
	// Hash is the engine's block hash; Parent the hash before it when
	// HasParent.
	Hash, Parent uint64
	HasParent    bool
	// Tokens are the block's tokens (one block).
	Tokens []uint32
	// LoRA names the adapter the block was computed under; "" for the model.
	LoRA string
	// Media has bit 1<<m set for each Medium m the engine holds a copy on;
	// zero for a block kept only so its descendants chain.
	Media uint8
}

// NewRebuild starts an empty rebuild of model's blocks.
func (ix *Index) NewRebuild(model string) *Rebuild {
	return &Rebuild{blockSize: ix.opts.BlockSize, model: model, chain: map[uint64]Key{}, roots: map[string]Key{}}
}

// Add keys b from its parent (added before it) and records it.
func (r *Rebuild) Add(b RebuildBlock) {
	if len(b.Tokens) != r.blockSize {
		r.Skipped++
		return
	}
	parent, ok := Key(0), false
	if b.HasParent {
		if parent, ok = r.rev.get(b.Parent); !ok {
			parent, ok = r.chain[b.Parent]
		}
		if !ok {
			r.UnknownParent++
		}
	}
	if !ok {
		root, known := r.roots[b.LoRA]
		if !known {
			root = Identity{Model: r.model, LoRA: b.LoRA}.Root()
			r.roots[b.LoRA] = root
		}
		parent = root
	}
	r.buf, _ = AppendChain(r.buf[:0], parent, r.blockSize, b.Tokens) // the length is checked above
	key := r.buf[0]
	if b.Media == 0 {
		r.chain[b.Hash] = key
		r.ChainOnly++
		return
	}
	r.rev.put(b.Hash, key)
	packed, _ := r.want.get(uint64(key))
	rf := unpackRefs(packed)
	for m := range numMedia {
		if b.Media&(1<<m) != 0 {
			rf.add(Medium(m))
		}
	}
	r.want.put(uint64(key), packRefs(rf))
	r.Held++
}

func packRefs(r refs) Key { return Key(r[0]) | Key(r[1])<<8 | Key(r[2])<<16 | Key(r[3])<<24 }

func unpackRefs(k Key) refs { return refs{uint8(k), uint8(k >> 8), uint8(k >> 16), uint8(k >> 24)} }

// ReplaceResult says what a Replace changed.
type ReplaceResult struct {
	// Added counts keys the holder did not hold before, Dropped keys it held
	// that the rebuild does not, Kept keys held before and after.
	Added, Dropped, Kept int
}

// Replace makes r the confirmed state of (endpoint, rank), replacing what
// it held. The holder's events wait meanwhile, so no batch interleaves. For
// lookups the swap is per key and additive first: every new key is in
// before any old one goes, so a block held before and after never looks
// missing; a lookup during the swap may see an old-only block beside the
// new ones, never a hole in the new state. Predictions of the new keys for
// the endpoint are confirmed, as a Store confirms them. r must not be used
// afterwards.
func (ix *Index) Replace(endpoint string, rank int, r *Rebuild) (ReplaceResult, error) {
	hd, err := ix.holderFor(endpoint, rank, true)
	if err != nil {
		return ReplaceResult{}, fmt.Errorf("replacing blocks: %w", err)
	}
	var res ReplaceResult
	var out pending
	now, tick := ix.now(), ix.nextTick()
	hd.mu.Lock()
	hd.orphans.Store(0) // the old reverse map goes below
	r.want.all(func(k uint64, packed Key) {
		key := Key(k)
		s := ix.shardOf(key)
		s.mu.Lock()
		if s.c.setRefs(key, hd.id, unpackRefs(packed), tick) {
			res.Added++
			hd.live.Add(1)
		} else {
			res.Kept++
		}
		s.c.spec.confirm(key, hd.id.endpoint(), now, &out)
		ix.afterWrite(s, now, &out)
		s.mu.Unlock()
	})
	hd.rev.all(func(_ uint64, key Key) {
		if _, keep := r.want.get(uint64(key)); keep {
			return
		}
		s := ix.shardOf(key)
		s.mu.Lock()
		if s.c.drop(key, hd.id) {
			res.Dropped++
			hd.live.Add(-1)
		}
		s.mu.Unlock()
	})
	hd.rev = r.rev
	hd.mu.Unlock()
	ix.stats.unknownParent.Add(int64(r.UnknownParent))
	ix.stats.storedBlocks.Add(int64(res.Added))
	ix.stats.clearedEntries.Add(int64(res.Dropped))
	ix.report(out)
	return res, nil
}

// setRefs sets h's copies of key to r, creating the entry when h held none,
// and stamps the key as used. It reports whether the entry is new.
func (c *core) setRefs(key Key, h holderID, r refs, tick uint32) bool {
	slot := c.keys.slot(key)
	var head uint32
	if slot != nil {
		head = slot.head
	}
	at, _ := c.find(head, h)
	created := at == 0
	if created {
		at = c.newEntry(entry{holder: h, next: head})
		if slot != nil {
			slot.head = at
		} else {
			slot = c.keys.put(key, at, tick)
		}
		c.nEntries++
	}
	c.at(at).refs = r
	touchSlot(slot, tick)
	return created
}
