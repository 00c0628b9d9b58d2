package index

import "sync/atomic"

// counters are the index's cumulative event counts, kept as atomics so the
// hot paths never touch a metrics library.
type counters struct {
	storedBlocks      atomic.Int64
	removedBlocks     atomic.Int64
	unknownRemoved    atomic.Int64
	unknownParent     atomic.Int64
	reannounced       atomic.Int64
	blockSizeMismatch atomic.Int64
	lengthMismatch    atomic.Int64
	unkeyed           atomic.Int64
	clearedEntries    atomic.Int64
	evictedKeys       atomic.Int64
	evictedEntries    atomic.Int64
	speculated        atomic.Int64
	withdrawn         atomic.Int64
	outcomes          [Dropped + 1]atomic.Int64
	remoteSpeculated  atomic.Int64
	remoteOutcomes    [Dropped + 1]atomic.Int64
}

// Stats is a point-in-time summary of the index.
type Stats struct {
	// Keys, Entries and Speculative count live keys with a confirmed entry,
	// confirmed (key, endpoint, rank) entries and speculative entries.
	Keys, Entries, Speculative int64
	// Bytes is the estimated memory, which Options.MaxBytes bounds.
	Bytes int64
	// Endpoints is how many endpoint names were ever seen.
	Endpoints int

	StoredBlocks, RemovedBlocks int64
	// UnknownRemoved counts removals of hashes not held (evicted, or stored
	// before the router started).
	UnknownRemoved int64
	// UnknownParent counts stored events whose parent hash was unknown.
	UnknownParent int64
	// Reannounced counts stored blocks the holder already held on that
	// medium under the same hash: announced again, stored once.
	Reannounced int64
	// BlockSizeMismatch counts events rejected for their block size;
	// LengthMismatch events whose token count disagreed with their hashes;
	// Unkeyed token-less blocks whose hash was unknown.
	BlockSizeMismatch, LengthMismatch, Unkeyed int64
	ClearedEntries                             int64
	EvictedKeys, EvictedEntries                int64
	Speculated                                 int64
	// Withdrawn counts predictions ended early because their request failed
	// (Withdraw); they are also counted as StaleExpiry outcomes.
	Withdrawn int64
	// Outcomes counts ended speculative entries of this router's own
	// decisions by OutcomeKind.
	Outcomes [Dropped + 1]int64
	// RemoteSpeculated and RemoteOutcomes count entries applied from other
	// replicas' predictions (SpeculateRemote) and how they ended, apart from
	// the local ones so that no replica counts another's decisions.
	RemoteSpeculated int64
	RemoteOutcomes   [Dropped + 1]int64
}

// Stats returns current totals. It locks each shard briefly for reading.
func (ix *Index) Stats() Stats {
	var st Stats
	for i := range ix.shards {
		s := &ix.shards[i]
		s.mu.RLock()
		st.Keys += int64(s.c.keys.len())
		st.Entries += int64(s.c.nEntries)
		st.Speculative += int64(s.c.spec.n)
		st.Bytes += s.c.bytes()
		s.mu.RUnlock()
	}
	c := &ix.stats
	st.Endpoints = ix.eps.count()
	st.StoredBlocks, st.RemovedBlocks = c.storedBlocks.Load(), c.removedBlocks.Load()
	st.UnknownRemoved, st.UnknownParent = c.unknownRemoved.Load(), c.unknownParent.Load()
	st.Reannounced = c.reannounced.Load()
	st.BlockSizeMismatch, st.LengthMismatch = c.blockSizeMismatch.Load(), c.lengthMismatch.Load()
	st.Unkeyed, st.ClearedEntries = c.unkeyed.Load(), c.clearedEntries.Load()
	st.EvictedKeys, st.EvictedEntries = c.evictedKeys.Load(), c.evictedEntries.Load()
	st.Speculated = c.speculated.Load()
	st.Withdrawn = c.withdrawn.Load()
	st.RemoteSpeculated = c.remoteSpeculated.Load()
	for k := range st.Outcomes {
		st.Outcomes[k] = c.outcomes[k].Load()
		st.RemoteOutcomes[k] = c.remoteOutcomes[k].Load()
	}
	return st
}
