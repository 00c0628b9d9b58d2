package index

import (
	"math/bits"
	"unsafe"

	"github.com/warmroute/warmroute/internal/prefetch"
)

// Store and Remove apply an event's blocks eventBatch at a time, in three
// passes: the holder's reverse-table slots are read for the whole batch, then
// the batch's shards are write-locked in ascending order (as Lookup and
// speculateBatch take theirs) and every key's slot is read, and only then is
// each block applied. Each pass's loads are independent of one another, so
// their cache and TLB misses overlap instead of following one another, and a
// batch takes one lock per shard instead of one per block. The per-block
// work is the same as storeBlock's and removeBlock's; a batch whose blocks
// could affect each other's reverse entries (a repeated hash, or a hash the
// holder held for another key, whose old entry must be dropped under its own
// shard lock) is applied block by block by those functions instead.

// eventBatch is how many blocks of one event Store and Remove apply
// together: a vLLM step's 16 blocks at once, so one message's misses overlap
// in one round rather than two.
const eventBatch = 16

// batchShards collects the distinct shards of keys, ascending, into dst.
func (ix *Index) batchShards(keys []Key, dst *[lookupBatch]uint64) []uint64 {
	return ix.sortedShards(keys, dst[:])
}

// sortedShards is batchShards for any batch size: dst's capacity is at least
// len(keys).
func (ix *Index) sortedShards(keys []Key, dst []uint64) []uint64 {
	shards := dst[:0]
	if len(ix.shards) <= 64 {
		// Up to 64 shards (the default), a bit set sorts and dedups
		// without insertSorted's data-dependent shifts.
		var set uint64
		for _, k := range keys {
			set |= 1 << ix.shardIndex(k)
		}
		for ; set != 0; set &= set - 1 {
			shards = append(shards, uint64(bits.TrailingZeros64(set)))
		}
		return shards
	}
	for _, k := range keys {
		shards = insertSorted(shards, ix.shardIndex(k))
	}
	return shards
}

// lockBatch write-locks the distinct shards of keys in ascending order and
// returns them (in dst) for the caller to unlock.
func (ix *Index) lockBatch(keys []Key, dst []uint64) []uint64 {
	shards := ix.sortedShards(keys, dst)
	for _, i := range shards {
		ix.shards[i].mu.Lock()
	}
	return shards
}

// probeBatch prefetches every key's home slot and prediction home slot, so
// that their cache misses overlap; the caller holds the keys' shard locks.
// It prefetches one slot per table without following the probe: a probe
// loop branches on what it loaded, and each mispredicted exit would wait for
// its miss before the next key's load could issue.
func (ix *Index) probeBatch(keys []Key) {
	for _, k := range keys {
		c := &ix.shardOf(k).c
		c.keys.prefetch(k)
		c.spec.heads.prefetch(k)
	}
}

// probeKeys is probeBatch without the prediction slots, for removals,
// which never read them.
func (ix *Index) probeKeys(keys []Key) {
	for _, k := range keys {
		ix.shardOf(k).c.keys.prefetch(k)
	}
}

// probeHeads is probeBatch with only the prediction slots.
func (ix *Index) probeHeads(keys []Key) {
	for _, k := range keys {
		ix.shardOf(k).c.spec.heads.prefetch(k)
	}
}

// probeFree prefetches the head of each shard's free entry list, which the
// batch's first new entry in that shard pops: the list is a stack whose
// deeper entries were freed long ago, so without it each pop could wait for
// a miss of its own. The caller holds the shards' locks.
func (ix *Index) probeFree(shards []uint64) {
	for _, i := range shards {
		c := &ix.shards[i].c
		if f := c.freeEntry; f != 0 {
			prefetch.Line(unsafe.Pointer(c.at(f)))
		}
	}
}

// probeSpecWrites prefetches, for each shard of a speculation batch, the
// free prediction its next insert pops and the expiry-queue slot that insert
// appends to: both were last touched long ago (the free list is a stack of
// expired predictions, the queue a ring the size of the shard's
// predictions), so without it each insert waits for its own two misses. The
// caller holds the shards' locks.
func (ix *Index) probeSpecWrites(shards []uint64) {
	for _, i := range shards {
		t := &ix.shards[i].c.spec
		if f := t.free; f != 0 {
			prefetch.Line(unsafe.Pointer(t.at(f)))
		}
		if q := &t.queue; len(q.buf) > 0 {
			prefetch.Line(unsafe.Pointer(&q.buf[(q.head+q.n)&(len(q.buf)-1)]))
		}
	}
}

// probeEntries prefetches the first overflow entry of every key that has
// one (reading their slots, with the first two holders inline, which
// probeBatch prefetched), so that removals find their entries without a
// miss each; the caller holds the keys' shard locks.
func (ix *Index) probeEntries(keys []Key) {
	for _, k := range keys {
		c := &ix.shardOf(k).c
		if s := c.keys.slot(k); s != nil {
			c.prefetchOverflow(s)
		}
	}
}

// probeSpecs prefetches the head prediction of every key that has one
// (reading their heads slots, which probeBatch prefetched): a block the
// router predicted for the storing endpoint is usually that head, so
// confirming it finds its entry without a miss. A shard holding no
// prediction costs one predictable branch. The caller holds the keys' shard
// locks.
func (ix *Index) probeSpecs(keys []Key) {
	for _, k := range keys {
		ix.shardOf(k).c.prefetchHeadSpec(k)
	}
}

// prefetchHeadSpec prefetches the first prediction of k, if any.
func (c *core) prefetchHeadSpec(k Key) {
	if c.spec.n == 0 {
		return
	}
	if h := c.spec.heads.head(k); h != 0 {
		prefetch.Line(unsafe.Pointer(c.spec.at(h)))
	}
}

// prefetchOverflow prefetches the first overflow entry of slot s, if any.
func (c *core) prefetchOverflow(s *holderSlot) {
	if o := overflowOf(s); o != 0 {
		prefetch.Line(unsafe.Pointer(c.at(o)))
	}
}

// prefetch prefetches k's home slot in its part (see probeBatch), and the
// slot after it: when the home slot ends its cache line, an insertion's
// probe or a deletion's backward shift reads the next line, and that miss
// would otherwise come alone. Declared here rather than in keytable.go
// because only the batches use it.
func (t *keyTable[S]) prefetch(k Key) {
	p := t.part(k)
	if len(p.slots) == 0 {
		return
	}
	i := uint64(k) & p.mask
	a, b := unsafe.Pointer(&p.slots[i]), unsafe.Pointer(&p.slots[(i+1)&p.mask])
	prefetch.Line(a)
	if prefetch.OtherLine(a, b) { // every other 32-byte slot shares its line with the next
		prefetch.Line(b)
	}
}

// prefetchRun prefetches the slots after slot i that deleting it reads:
// the backward shift scans the rest of i's run, 2.5 slots on average in
// BenchmarkIngest/steady's tables (3.5 slots from i counting the free one
// that ends the run: about two lines of 32-byte slots), and
// those lines would otherwise miss one after another, each waiting for the
// one before to say whether the run goes on. Slots i+2 and i+4 are the two
// lines after i's for a 32-byte slot (i+1 is prefetch's second line when i
// is the key's home).
func (t *flatKeys[S]) prefetchRun(i uint64) {
	prefetch.Line(unsafe.Pointer(&t.slots[(i+2)&t.mask]))
	prefetch.Line(unsafe.Pointer(&t.slots[(i+4)&t.mask]))
}

// repeats reports whether hashes (at most eventBatch) holds a value twice.
func repeats(hashes []uint64) bool {
	for i := 1; i < len(hashes); i++ {
		for j := range i {
			if hashes[i] == hashes[j] {
				return true
			}
		}
	}
	return false
}

// storeBatch stores up to eventBatch blocks for hd; the caller holds hd.mu.
func (ix *Index) storeBatch(hd *holder, hashes []uint64, keys []Key, m Medium, now int64, tick uint32, out *pending) {
	var known [eventBatch]bool
	hd.rev.prefetchAll(hashes)
	sequential := repeats(hashes)
	for j, h := range hashes {
		old, ok := hd.rev.get(h)
		known[j] = ok
		sequential = sequential || (ok && old != keys[j])
	}
	if sequential {
		for j, h := range hashes {
			ix.storeBlock(hd, h, keys[j], m, now, tick, out)
		}
		return
	}
	for j, h := range hashes {
		hd.rev.put(h, keys[j])
	}
	var buf [eventBatch]uint64
	shards := ix.lockBatch(keys, buf[:])
	ix.probeBatch(keys)
	ix.probeFree(shards)
	ix.probeSpecs(keys)
	created := 0
	for j, k := range keys {
		c := &ix.shardOf(k).c
		if known[j] && c.holdsOn(k, hd.id, m) {
			c.touch(k, tick)
			ix.stats.reannounced.Add(1)
		} else if c.add(k, hd.id, m, tick) {
			created++
		}
		c.spec.confirm(k, hd.id.endpoint(), now, out)
	}
	for _, i := range shards {
		s := &ix.shards[i]
		ix.afterWrite(s, now, out)
		s.mu.Unlock()
	}
	hd.live.Add(int64(created))
}

// removeBatch removes one copy on m of up to eventBatch blocks from hd and
// returns how many it found; the caller holds hd.mu.
func (ix *Index) removeBatch(hd *holder, hashes []uint64, m Medium) int {
	hd.rev.prefetchAll(hashes)
	if repeats(hashes) {
		found := 0
		for _, h := range hashes {
			if ix.removeBlock(hd, h, m) {
				found++
			}
		}
		return found
	}
	var keyBuf [eventBatch]Key
	var at [eventBatch]int8 // batch position of each known key's hash
	keys := keyBuf[:0]
	for j, h := range hashes {
		if k, ok := hd.rev.get(h); ok {
			at[len(keys)] = int8(j)
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return 0
	}
	var buf [eventBatch]uint64
	shards := ix.lockBatch(keys, buf[:])
	ix.probeKeys(keys)
	ix.probeEntries(keys)
	var drop [eventBatch]bool
	found, gone := 0, 0
	for j, k := range keys {
		c := &ix.shardOf(k).c
		f, g := c.remove(k, hd.id, m)
		held := f || c.holds(k, hd.id)
		if f {
			found++
		}
		if g {
			gone++
		}
		// Evicted earlier (or gone now): the reverse entry has no more use.
		drop[j] = g || !held
	}
	for _, i := range shards {
		ix.shards[i].mu.Unlock()
	}
	hd.live.Add(-int64(gone))
	for j := range keys {
		if drop[j] {
			hd.rev.delete(hashes[at[j]])
		}
	}
	return found
}
