package index

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
)

// Rebuild is the confirmed state of one (endpoint, rank) rebuilt from a
// snapshot of its engine's blocks: keyed from their tokens and parents as
// they are added, without any of the index's locks, then swapped in by
// Replace. Add blocks parents first. A Rebuild is not safe for concurrent
// use; build it with NewRebuild.
type Rebuild struct {
	blockSize int
	model     string
	rev       revTable // engine hash -> key of the held blocks
	// pending are held blocks not yet in rev: puts are batched (putAll),
	// and flushed before rev is read.
	pending []revSlot
	// held lists every held block's key and media, in the order added;
	// Replace sorts it in walk order, so the index's tables are walked shard by shard.
	held  []heldKey
	chain map[uint64]Key // chain-only blocks: the engine no longer holds them
	roots map[rootOf]Key // chain roots by adapter and salt
	buf   []Key
	// last is the block added last: a snapshot sends chains parents first,
	// so it is usually the next block's parent.
	lastHash uint64
	lastKey  Key
	hasLast  bool
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
	// CacheSalt is the salt a block starting a chain was computed under
	// (Identity.CacheSalt); a block chained from its parent inherits it.
	CacheSalt string
	// Extra is a digest of the identity the engine mixed into the block's
	// hash beyond its tokens, 0 for none, as Stored.Extra (AppendChainExtra).
	Extra uint64
}

// rootOf names a chain root of a rebuild's model.
type rootOf struct{ lora, salt string }

// NewRebuild starts an empty rebuild of model's blocks.
func (ix *Index) NewRebuild(model string) *Rebuild {
	return &Rebuild{blockSize: ix.opts.BlockSize, model: model, chain: map[uint64]Key{}, roots: map[rootOf]Key{}}
}

// Reserve sizes the rebuild's tables for n more blocks, so a snapshot
// that announces its size is keyed without growing them.
func (r *Rebuild) Reserve(n int) {
	r.rev.reserve(r.rev.len() + len(r.pending) + n)
	r.held = slices.Grow(r.held, n)
	r.pending = slices.Grow(r.pending, n)
}

// reserve grows t's parts for n entries spread evenly by the hash mix.
func (t *revTable) reserve(n int) {
	per := n/revParts + n/(revParts*8) + 1 // a little over the mean: parts differ
	size := minKeySlots
	for size*maxLoadNum < per*maxLoadDen {
		size *= 2
	}
	for i := range t.parts {
		if len(t.parts[i].slots) < size {
			t.parts[i].resize(size)
		}
	}
}

// Add keys b from its parent (added before it) and records it.
func (r *Rebuild) Add(b RebuildBlock) {
	if len(b.Tokens) != r.blockSize {
		r.Skipped++
		return
	}
	parent, ok := Key(0), false
	if b.HasParent {
		if r.hasLast && b.Parent == r.lastHash {
			parent, ok = r.lastKey, true
		} else if parent, ok = r.heldKeyOf(b.Parent); !ok {
			parent, ok = r.chain[b.Parent]
		}
		if !ok {
			r.UnknownParent++
		}
	}
	if !ok {
		id := rootOf{b.LoRA, b.CacheSalt}
		root, known := r.roots[id]
		if !known {
			root = Identity{Model: r.model, LoRA: b.LoRA, CacheSalt: b.CacheSalt}.Root()
			r.roots[id] = root
		}
		parent = root
	}
	r.buf, _ = AppendChain(r.buf[:0], parent, r.blockSize, b.Tokens) // the length is checked above
	key := r.buf[0]
	if b.Extra != 0 {
		key = mixExtra(key, b.Extra) // as AppendChainExtra keys a stored block
	}
	r.lastHash, r.lastKey, r.hasLast = b.Hash, key, true
	if b.Media == 0 {
		r.chain[b.Hash] = key
		r.ChainOnly++
		return
	}
	r.pending = append(r.pending, revSlot{hash: b.Hash, key: key})
	r.held = append(r.held, heldKey{key: key, media: b.Media})
	r.Held++
}

// heldKey returns the key of held block h, flushing the pending puts first.
func (r *Rebuild) heldKeyOf(h uint64) (Key, bool) {
	r.flush()
	return r.rev.get(h)
}

func (r *Rebuild) flush() {
	r.rev.putAll(r.pending)
	r.pending = r.pending[:0]
}

// heldKey is one held block of a rebuild.
type heldKey struct {
	key   Key
	media uint8
}

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
	r.flush()
	rot := ix.walkOrder()
	newKeys := sortHeld(r.held, rot)
	ix.reserveKeys(newKeys)
	var res ReplaceResult
	var out pending
	now, tick := ix.now(), ix.nextTick()
	hd.mu.Lock()
	hd.orphans.Store(0) // the old reverse map goes below
	var oldKeys []heldKey
	if n := hd.rev.len(); n > 0 {
		oldKeys = make([]heldKey, 0, n)
		hd.rev.all(func(_ uint64, key Key) { oldKeys = append(oldKeys, heldKey{key: key}) })
		oldKeys = sortHeld(oldKeys, rot)
	}
	var w shardWalk
	for i := 0; i < len(newKeys); {
		key, rf := newKeys[i].key, refs{}
		for ; i < len(newKeys) && newKeys[i].key == key; i++ { // the same content under several hashes
			for m := range numMedia {
				if newKeys[i].media&(1<<m) != 0 {
					rf.add(Medium(m))
				}
			}
		}
		s := w.lock(ix, key, now, &out)
		if s.c.setRefs(key, hd.id, rf, tick) {
			res.Added++
			hd.live.Add(1)
		} else {
			res.Kept++
		}
		s.c.spec.confirm(key, hd.id.endpoint(), now, &out)
	}
	// Old keys the rebuild does not hold go; both lists are sorted.
	j := 0
	for i := range oldKeys {
		key := oldKeys[i].key
		if i > 0 && key == oldKeys[i-1].key {
			continue
		}
		for j < len(newKeys) && order(newKeys[j].key, rot) < order(key, rot) {
			j++
		}
		if j < len(newKeys) && newKeys[j].key == key {
			continue
		}
		if s := w.lock(ix, key, now, &out); s.c.drop(key, hd.id) {
			res.Dropped++
			hd.live.Add(-1)
		}
	}
	w.unlock(ix, now, &out)
	hd.rev = r.rev
	hd.mu.Unlock()
	ix.stats.unknownParent.Add(int64(r.UnknownParent))
	ix.stats.storedBlocks.Add(int64(res.Added))
	ix.stats.clearedEntries.Add(int64(res.Dropped))
	ix.report(out)
	return res, nil
}

// shardWalk keeps one shard locked while keys in walk order (so by
// shard) come for it, and runs the shard's after-write work when leaving
// it: one lock per run of keys instead of one per key. A run is cut at
// maxLockedKeys so lookups on that shard wait microseconds, not the run.
type shardWalk struct {
	s *shard
	n int
}

const maxLockedKeys = 256

func (w *shardWalk) lock(ix *Index, key Key, now int64, out *pending) *shard {
	s := ix.shardOf(key)
	if s != w.s || w.n >= maxLockedKeys {
		w.unlock(ix, now, out)
		s.mu.Lock()
		w.s, w.n = s, 0
	}
	w.n++
	return s
}

func (w *shardWalk) unlock(ix *Index, now int64, out *pending) {
	if w.s != nil {
		ix.afterWrite(w.s, now, out)
		w.s.mu.Unlock()
		w.s = nil
	}
}

// walkOrder is the order Replace walks keys in: a rotation of the key's
// bits that puts the shard bits on top, then the key-table part bits, so the
// keys come shard by shard and, within a shard, part by part (a part of a
// million-key index is a few tens of kilobytes: it stays in cache while its
// keys come). Sorting by the plain value would change shard on almost every
// key (the shard bits are in the middle), missing the cache and taking a
// shard lock per key. A rotation is a bijection, so equal keys stay adjacent
// and two lists sorted by it merge by comparing it.
func (ix *Index) walkOrder() int { return 24 - bits.Len64(ix.mask) }

func order(k Key, rot int) uint64 { return bits.RotateLeft64(uint64(k), rot) }

// sortHeld sorts a by order(key, rot): one counting-sort pass on the top 16
// bits, then a comparison sort of each bucket (a few keys each at a million
// keys, as keys are hash outputs), which is several times quicker than a
// comparison sort of the whole and half the passes of a full radix sort.
func sortHeld(a []heldKey, rot int) []heldKey {
	byOrder := func(x, y heldKey) int { return cmp.Compare(order(x.key, rot), order(y.key, rot)) }
	if len(a) < 256 {
		slices.SortFunc(a, byOrder)
		return a
	}
	var count [1<<16 + 1]int
	for i := range a {
		count[order(a[i].key, rot)>>48+1]++
	}
	for d := 1; d < len(count); d++ {
		count[d] += count[d-1]
	}
	out := make([]heldKey, len(a))
	next := count
	for i := range a {
		d := order(a[i].key, rot) >> 48
		out[next[d]] = a[i]
		next[d]++
	}
	for d := 0; d < 1<<16; d++ {
		if bucket := out[count[d]:count[d+1]]; len(bucket) > 1 {
			slices.SortFunc(bucket, byOrder)
		}
	}
	return out
}

// setRefs sets h's copies of key to r, creating the entry when h held none,
// and stamps the key as used. It reports whether the entry is new.
func (c *core) setRefs(key Key, h holderID, r refs, tick uint32) bool {
	e, created := c.holderEntry(key, h, tick)
	*e = r
	return created
}
