package index

import "fmt"

// Stored is one decoded BlockStored event, as the events package hands it over.
type Stored struct {
	// Endpoint ("ip:port") and Rank (data-parallel rank, 0-255) name the
	// engine that stored the blocks.
	Endpoint string
	Rank     int
	// Hashes are the engine's block hashes, one per block, normalised to
	// uint64. They are only used to apply later removals.
	Hashes []uint64
	// Parent is the engine hash of the block before Hashes[0], when HasParent.
	Parent    uint64
	HasParent bool
	// Tokens are the stored blocks' token ids; BlockSize must equal the
	// index's. Offload tiers may send no tokens and block size 0 for blocks
	// the engine already announced: then Hashes must be known.
	Tokens    []uint32
	BlockSize int
	// Identity is the model or adapter and the cache salt the blocks were
	// computed under (the salt only matters when HasParent is false).
	Identity Identity
	Medium   Medium
	// Extra has, per block (aligned with Hashes and the token blocks), a
	// non-zero digest of what else the engine hashed into the block (media,
	// prompt embeddings); nil when nothing. See AppendChainExtra.
	Extra []uint64
}

// StoreResult says how much of a Stored event could be applied.
type StoreResult struct {
	// Blocks is how many blocks were recorded.
	Blocks int
	// UnknownParent is set when the parent hash was not known (the router
	// started after it was stored, or missed the event): the blocks were keyed
	// as the start of a sequence, so only their descendants will chain.
	UnknownParent bool
	// Skipped counts blocks that could not be keyed: hashes beyond the
	// tokens, or unknown hashes in a token-less event.
	Skipped int
}

func (ix *Index) holderFor(endpoint string, rank int, create bool) (*holder, error) {
	if endpoint == "" {
		return nil, ErrEndpoint
	}
	if rank < 0 || rank > MaxRank {
		return nil, fmt.Errorf("rank %d: %w", rank, ErrRank)
	}
	if hd := ix.holders.cached(endpoint, rank); hd != nil {
		return hd, nil
	}
	var hd *holder
	if !create {
		ep, ok := ix.eps.lookup(endpoint)
		if !ok {
			return nil, nil
		}
		if hd = ix.holders.get(makeHolder(ep, rank)); hd == nil {
			return nil, nil
		}
	} else {
		ep, err := ix.eps.intern(endpoint)
		if err != nil {
			return nil, fmt.Errorf("endpoint %q: too many endpoints: %w", endpoint, err)
		}
		hd = ix.holders.getOrCreate(makeHolder(ep, rank), endpoint)
	}
	ix.holders.remember(hd)
	return hd, nil
}

// Store applies a BlockStored event: it keys the blocks from their tokens,
// chaining from the parent's key, records one more copy of each for the
// holder, and confirms any prediction of them for the endpoint.
func (ix *Index) Store(ev Stored) (StoreResult, error) {
	if len(ev.Tokens) == 0 && ev.BlockSize == 0 {
		return ix.storeKnown(ev)
	}
	if ev.BlockSize != ix.opts.BlockSize {
		ix.stats.blockSizeMismatch.Add(1)
		return StoreResult{}, fmt.Errorf("storing blocks for %q: event block size %d, index %d: %w",
			ev.Endpoint, ev.BlockSize, ix.opts.BlockSize, ErrBlockSize)
	}
	hd, err := ix.holderFor(ev.Endpoint, ev.Rank, true)
	if err != nil {
		return StoreResult{}, fmt.Errorf("storing blocks: %w", err)
	}
	out := getPending()
	defer putPending(out)
	hd.mu.Lock()
	res, err := ix.storeLocked(hd, ev, out)
	hd.mu.Unlock()
	ix.report(*out)
	return res, err
}

// storeLocked applies ev for hd, collecting outcomes in out; the caller
// holds hd.mu and reports out once it is released.
func (ix *Index) storeLocked(hd *holder, ev Stored, out *pending) (StoreResult, error) {
	var res StoreResult
	parent := ev.Identity.Root()
	if ev.HasParent {
		k, ok := hd.rev.get(ev.Parent)
		if ok {
			parent = k
		} else {
			res.UnknownParent = true
			ix.stats.unknownParent.Add(1)
		}
	}
	kp := ix.scratch.Get().(*[]Key)
	defer ix.scratch.Put(kp)
	keys, err := AppendChainExtra((*kp)[:0], parent, ix.opts.BlockSize, ev.Tokens, ev.Extra)
	*kp = keys
	if err != nil {
		return res, fmt.Errorf("storing blocks for %q: %w", ev.Endpoint, err)
	}
	n := min(len(keys), len(ev.Hashes))
	res.Skipped = len(ev.Hashes) - n
	if len(keys) != len(ev.Hashes) {
		ix.stats.lengthMismatch.Add(1)
	}
	now, tick := ix.now(), ix.nextTick()
	for base := 0; base < n; base += eventBatch {
		end := min(base+eventBatch, n)
		ix.storeBatch(hd, ev.Hashes[base:end], keys[base:end], ev.Medium, now, tick, out)
	}
	res.Blocks = n
	ix.stats.storedBlocks.Add(int64(n))
	ix.compact(hd)
	return res, nil
}

// storeBlock records one copy of key under engine hash h. An engine reusing
// a hash for other content must have dropped the old block, so the old key's
// entry goes. A hash the holder already holds for key on m is announced
// again, not stored again (vLLM's kv_cache_report_mode=full re-announces
// reused blocks): counting it twice would keep the block confirmed after its
// one BlockRemoved.
func (ix *Index) storeBlock(hd *holder, h uint64, key Key, m Medium, now int64, tick uint32, out *pending) {
	old, known := hd.rev.swap(h, key)
	ix.storeSwapped(hd, key, old, known, m, now, tick, out)
}

// storeSwapped is storeBlock once hd.rev maps the block's hash to key; old
// and known are what it mapped the hash to before.
func (ix *Index) storeSwapped(hd *holder, key, old Key, known bool, m Medium, now int64, tick uint32, out *pending) {
	if known && old != key {
		ix.dropEntry(hd, old)
	}
	s := ix.shardOf(key)
	s.mu.Lock()
	var created bool
	if known && old == key && s.c.holdsOn(key, hd.id, m) {
		s.c.touch(key, tick)
		ix.stats.reannounced.Add(1)
	} else {
		created = s.c.add(key, hd.id, m, tick)
	}
	s.c.spec.confirm(key, hd.id.endpoint(), now, out)
	ix.afterWrite(s, now, out)
	s.mu.Unlock()
	if created {
		hd.live.Add(1)
	}
}

// storeKnown applies a token-less BlockStored (an offload tier copying blocks
// the engine announced before): each hash must already be known.
func (ix *Index) storeKnown(ev Stored) (StoreResult, error) {
	hd, err := ix.holderFor(ev.Endpoint, ev.Rank, true)
	if err != nil {
		return StoreResult{}, fmt.Errorf("storing known blocks: %w", err)
	}
	var res StoreResult
	var out pending
	now, tick := ix.now(), ix.nextTick()
	hd.mu.Lock()
	for _, h := range ev.Hashes {
		key, ok := hd.rev.get(h)
		if !ok {
			res.Skipped++
			continue
		}
		ix.storeBlock(hd, h, key, ev.Medium, now, tick, &out)
		res.Blocks++
	}
	hd.mu.Unlock()
	ix.stats.storedBlocks.Add(int64(res.Blocks))
	ix.stats.unkeyed.Add(int64(res.Skipped))
	ix.report(out)
	return res, nil
}

func (ix *Index) dropEntry(hd *holder, key Key) {
	s := ix.shardOf(key)
	s.mu.Lock()
	dropped := s.c.drop(key, hd.id)
	s.mu.Unlock()
	if dropped {
		hd.live.Add(-1)
	}
}
