package index

import (
	"fmt"
	"sync"
)

// Change is one event of an engine message for Apply: a BlockStored, or,
// when Removed is set, a BlockRemoved of Hashes on Medium (the other fields
// are then unused). Endpoint and Rank are Apply's, not the Stored's.
type Change struct {
	Removed bool
	Stored
}

// ChangeResult is what Apply did with one Change: what Store returned for
// a store, how many hashes were unknown (as Remove returns) for a removal,
// and the error Store or Remove would have returned.
type ChangeResult struct {
	Stored  StoreResult
	Unknown int
	Err     error
}

// Apply applies one engine message's events for (endpoint, rank) in order,
// with the effect of calling Store and Remove for each in turn, and writes
// each one's outcome into results (which must be at least as long as
// changes). It holds the holder's lock for the whole message and applies
// its blocks in plans of up to planMax: each plan's reverse-table work is
// done first, then its shards are write-locked once, in ascending order, for
// all of its stores and removals together, their slots, free entries and
// overflow entries are touched in two rounds before any is written, and then
// the blocks are applied in the message's order. A message's 16 stored and
// 16 removed blocks thus take one lock round and two rounds of misses
// instead of Store and Remove's two lock rounds and five rounds.
//
// A block that would see a different reverse table in the plan than one by
// one (a hash or parent hash that a removal already in the plan may drop)
// ends the plan first; a stored hash that named another key is applied
// block by block (storeSwapped) after the plan so far; events the batched
// paths do not take (token-less stores, a holder not seen yet) go through
// Store and Remove themselves. TestApplyMatchesOneByOne and FuzzApply
// compare the results, the lookups of every chain and stored key, the
// reverse tables and the counters with storeBlock and removeBlock applied
// one by one. Under eviction the reverse table is compacted once per
// message rather than after each event, as eviction itself already depends
// on batching.
func (ix *Index) Apply(endpoint string, rank int, changes []Change, results []ChangeResult) {
	results = results[:len(changes)]
	hd, err := ix.holderFor(endpoint, rank, false)
	if err != nil || hd == nil {
		// Errors, or a holder that does not exist yet (its first
		// message): Store and Remove say what they do with it.
		for i := range changes {
			results[i] = ix.applyOne(endpoint, rank, &changes[i])
		}
		return
	}
	out := getPending()
	defer putPending(out)
	pl := planPool.Get().(*plan)
	defer planPool.Put(pl)
	pl.start(hd, ix.now(), out)
	hd.mu.Lock()
	for i := range changes {
		results[i] = ChangeResult{}
		ch := &changes[i]
		switch {
		case ch.Removed:
			ix.planRemove(pl, ch, i, results)
		case len(ch.Tokens) == 0 && ch.BlockSize == 0:
			// An offload tier's token-less store: Store's own path.
			ix.flush(pl, results)
			hd.mu.Unlock()
			results[i] = ix.applyOne(endpoint, rank, ch)
			hd.mu.Lock()
		default:
			ix.planStore(pl, ch, i, results)
		}
	}
	ix.flush(pl, results)
	ix.compact(hd)
	hd.mu.Unlock()
	ix.report(*out)
	if n := pl.stored; n > 0 {
		ix.stats.storedBlocks.Add(int64(n))
	}
	if n := pl.removed; n > 0 {
		ix.stats.removedBlocks.Add(int64(n))
	}
	if n := pl.unknown; n > 0 {
		ix.stats.unknownRemoved.Add(int64(n))
	}
	if n := pl.reannounced; n > 0 {
		ix.stats.reannounced.Add(int64(n))
	}
	pl.hd, pl.out = nil, nil
}

// applyOne applies one change through Store or Remove.
func (ix *Index) applyOne(endpoint string, rank int, ch *Change) ChangeResult {
	if ch.Removed {
		u, err := ix.Remove(endpoint, rank, ch.Hashes, ch.Medium)
		return ChangeResult{Unknown: u, Err: err}
	}
	ev := ch.Stored
	ev.Endpoint, ev.Rank = endpoint, rank
	res, err := ix.Store(ev)
	return ChangeResult{Stored: res, Err: err}
}

// planMax is how many blocks one plan applies under one lock round: a
// message of 16 stored and 16 removed blocks, and room for more.
const planMax = 64

// planOp is one block of a plan.
type planOp struct {
	key    Key
	hash   uint64 // a removal's engine hash, for its reverse entry
	revAt  uint64 // where lookup found hash in the reverse table
	slotAt uint64 // a removal: where flush's probe found key (hinted)
	hinted bool
	change int32 // index of the Change in Apply's results
	remove bool
	known  bool // a store: the holder already mapped hash to key
	medium Medium
	tick   uint32 // a store's recency tick (its event's)
}

// plan collects the blocks of one message that Apply applies together.
type plan struct {
	hd  *holder
	now int64
	out *pending
	ops [planMax]planOp
	n   int
	// removes are the plan's removal hashes; filter has a bit per hash
	// (see filterBit) so that a store's check against them is one test.
	removes [planMax]uint64
	nrem    int
	filter  [4]uint64
	keys    [planMax]Key // scratch for sortedShards
	// Totals over the message, for Apply's counters.
	stored, removed, unknown, reannounced int
}

var planPool = sync.Pool{New: func() any { return new(plan) }}

func (pl *plan) start(hd *holder, now int64, out *pending) {
	pl.hd, pl.now, pl.out = hd, now, out
	pl.n, pl.nrem, pl.filter = 0, 0, [4]uint64{}
	pl.stored, pl.removed, pl.unknown, pl.reannounced = 0, 0, 0, 0
}

func filterBit(h uint64) (word, bit uint64) {
	m := mix(h)
	return m >> 62, 1 << (m >> 56 & 63)
}

// pendingRemove reports whether h is the hash of one of the plan's
// removals, whose reverse entry the plan may yet drop.
func (pl *plan) pendingRemove(h uint64) bool {
	w, b := filterBit(h)
	if pl.filter[w]&b == 0 {
		return false
	}
	for _, r := range pl.removes[:pl.nrem] {
		if r == h {
			return true
		}
	}
	return false
}

// anyPendingRemove reports whether any of hashes is a pending removal.
func (pl *plan) anyPendingRemove(hashes []uint64) bool {
	if pl.nrem == 0 {
		return false
	}
	for _, h := range hashes {
		if pl.pendingRemove(h) {
			return true
		}
	}
	return false
}

// planStore plans a store as storeLocked would apply it; the caller holds
// the holder's lock.
func (ix *Index) planStore(pl *plan, ch *Change, i int, results []ChangeResult) {
	ev, res := &ch.Stored, &results[i]
	if ev.BlockSize != ix.opts.BlockSize {
		ix.stats.blockSizeMismatch.Add(1)
		res.Err = fmt.Errorf("storing blocks for %q: event block size %d, index %d: %w",
			pl.hd.name, ev.BlockSize, ix.opts.BlockSize, ErrBlockSize)
		return
	}
	hd := pl.hd
	parent := ev.Identity.Root()
	if ev.HasParent {
		if pl.pendingRemove(ev.Parent) {
			ix.flush(pl, results)
		}
		k, ok := hd.rev.get(ev.Parent)
		if ok {
			parent = k
		} else {
			res.Stored.UnknownParent = true
			ix.stats.unknownParent.Add(1)
		}
	}
	kp := ix.scratch.Get().(*[]Key)
	defer ix.scratch.Put(kp)
	keys, err := AppendChainExtra((*kp)[:0], parent, ix.opts.BlockSize, ev.Tokens, ev.Extra)
	*kp = keys
	if err != nil {
		res.Err = fmt.Errorf("storing blocks for %q: %w", hd.name, err)
		return
	}
	n := min(len(keys), len(ev.Hashes))
	res.Stored.Skipped = len(ev.Hashes) - n
	if len(keys) != len(ev.Hashes) {
		ix.stats.lengthMismatch.Add(1)
	}
	tick := ix.nextTick()
	for base := 0; base < n; base += eventBatch {
		end := min(base+eventBatch, n)
		ix.planStoreBatch(pl, ev.Hashes[base:end], keys[base:end], ev.Medium, tick, int32(i), results)
	}
	res.Stored.Blocks = n
	pl.stored += n
}

// planStoreBatch plans up to eventBatch blocks of one store. The reverse
// table is updated as storeBlock would, one swap per block (so a hash
// repeated in the batch sees its earlier block, as one by one); a hash that
// named another key (whose old entry must be dropped under its own shard
// lock) sends the batch through storeSwapped block by block instead.
func (ix *Index) planStoreBatch(pl *plan, hashes []uint64, keys []Key, m Medium, tick uint32, change int32, results []ChangeResult) {
	hd := pl.hd
	if pl.n+len(hashes) > planMax || pl.anyPendingRemove(hashes) {
		ix.flush(pl, results)
	}
	var known [eventBatch]bool
	var old [eventBatch]Key
	rebound := false
	hd.rev.prefetchAll(hashes)
	for j, h := range hashes {
		old[j], known[j] = hd.rev.swap(h, keys[j])
		rebound = rebound || (known[j] && old[j] != keys[j])
	}
	if rebound {
		// The plan so far first: its blocks come before these.
		ix.flush(pl, results)
		for j := range hashes {
			ix.storeSwapped(hd, keys[j], old[j], known[j], m, pl.now, tick, pl.out)
		}
		return
	}
	for j := range hashes {
		pl.ops[pl.n] = planOp{key: keys[j], change: change, known: known[j], medium: m, tick: tick}
		pl.n++
	}
}

// planRemove plans a removal as Remove would apply it; the caller holds the
// holder's lock. A hash the plan already removes (repeated in the event,
// or in an earlier one) first flushes the plan, whose removal may drop its
// reverse entry.
func (ix *Index) planRemove(pl *plan, ch *Change, i int, results []ChangeResult) {
	hd, res := pl.hd, &results[i]
	for base := 0; base < len(ch.Hashes); base += eventBatch {
		hashes := ch.Hashes[base:min(base+eventBatch, len(ch.Hashes))]
		if pl.n+len(hashes) > planMax {
			ix.flush(pl, results)
		}
		hd.rev.prefetchAll(hashes)
		for _, h := range hashes {
			if pl.pendingRemove(h) {
				ix.flush(pl, results)
			}
			// Counted as unknown until flush finds the copy.
			res.Unknown++
			pl.unknown++
			k, at, ok := hd.rev.lookup(h)
			if !ok {
				continue
			}
			pl.ops[pl.n] = planOp{key: k, hash: h, revAt: at, change: int32(i), remove: true, medium: ch.Medium}
			pl.n++
			pl.removes[pl.nrem] = h
			pl.nrem++
			w, b := filterBit(h)
			pl.filter[w] |= b
		}
	}
}

// flush applies the plan's blocks and empties it; the caller holds the
// holder's lock.
func (ix *Index) flush(pl *plan, results []ChangeResult) {
	if pl.n == 0 {
		return
	}
	hd, out := pl.hd, pl.out
	ops := pl.ops[:pl.n]
	keys := pl.keys[:pl.n]
	for j := range ops {
		keys[j] = ops[j].key
	}
	var buf [planMax]uint64
	shards := ix.lockBatch(keys, buf[:])
	ix.touchPlan(ops, shards)
	var drop [planMax]bool
	stored, live := ix.applyPlan(pl, ops, results, &drop)
	// As in storeBatch and removeBatch, only a store's shards expire
	// predictions and evict: removals never grow a shard.
	for _, i := range shards {
		s := &ix.shards[i]
		if stored.has(ix, ops, i) {
			ix.afterWrite(s, pl.now, out)
		}
		s.mu.Unlock()
	}
	if live != 0 {
		hd.live.Add(int64(live))
	}
	for j := range ops {
		if drop[j] {
			hd.rev.prefetchRun(ops[j].hash, ops[j].revAt)
		}
	}
	for j := range ops {
		if drop[j] {
			hd.rev.deleteAt(ops[j].hash, ops[j].revAt)
		}
	}
	pl.n, pl.nrem, pl.filter = 0, 0, [4]uint64{}
}

// touchPlan prefetches what the plan's writes will read, in two rounds so
// the misses overlap: first every key's slot (and a store's prediction slot)
// and every shard's free entry; then, reading those slots, a removal's first
// overflow entry, when its key has more holders than its slot keeps inline
// (recording the slot it found), the slots after it that the deletion's
// backward shift reads (prefetchRun), and a store's head prediction. The caller
// holds the shards' locks.
func (ix *Index) touchPlan(ops []planOp, shards []uint64) {
	for j := range ops {
		c := &ix.shardOf(ops[j].key).c
		c.keys.prefetch(ops[j].key)
		if !ops[j].remove {
			c.spec.heads.prefetch(ops[j].key)
		}
	}
	ix.probeFree(shards)
	for j := range ops {
		k := ops[j].key
		c := &ix.shardOf(k).c
		if ops[j].remove {
			p := c.keys.part(k)
			if i, ok := p.find(k); ok {
				ops[j].slotAt, ops[j].hinted = i, true
				c.prefetchOverflow(&p.slots[i])
				p.prefetchRun(i)
			}
		} else {
			c.prefetchHeadSpec(k)
		}
	}
}

// applyPlan writes the plan's blocks in message order under the shards'
// locks: it marks in drop the blocks whose reverse entries go, and returns
// the shards stored into and the change in the holder's live blocks.
func (ix *Index) applyPlan(pl *plan, ops []planOp, results []ChangeResult, drop *[planMax]bool) (stored storeShards, live int) {
	hd := pl.hd
	for j := range ops {
		op := &ops[j]
		c := &ix.shardOf(op.key).c
		if op.remove {
			var f, g bool
			if op.hinted {
				f, g = c.removeHinted(op.key, op.slotAt, hd.id, op.medium)
			} else {
				f, g = c.remove(op.key, hd.id, op.medium)
			}
			if f {
				results[op.change].Unknown--
				pl.unknown--
				pl.removed++
			}
			if g {
				live--
			}
			drop[j] = g || (!f && !c.holds(op.key, hd.id))
			continue
		}
		stored.add(ix, op.key)
		if op.known && c.holdsOn(op.key, hd.id, op.medium) {
			c.touch(op.key, op.tick)
			pl.reannounced++
		} else if c.add(op.key, hd.id, op.medium, op.tick) {
			live++
		}
		c.spec.confirm(op.key, hd.id.endpoint(), pl.now, pl.out)
	}
	return stored, live
}

// storeShards records which shards a plan stored into: a bit set up to 64
// shards, else (a rare configuration) a scan of the plan's stores.
type storeShards struct {
	set uint64
	any bool
}

func (st *storeShards) add(ix *Index, k Key) {
	st.any = true
	if len(ix.shards) <= 64 {
		st.set |= 1 << ix.shardIndex(k)
	}
}

func (st *storeShards) has(ix *Index, ops []planOp, shard uint64) bool {
	if !st.any {
		return false
	}
	if len(ix.shards) <= 64 {
		return st.set&(1<<shard) != 0
	}
	for j := range ops {
		if !ops[j].remove && ix.shardIndex(ops[j].key) == shard {
			return true
		}
	}
	return false
}
