package index

import "fmt"

// Remove applies a BlockRemoved event: one copy on medium m of each block,
// named by engine hash, is gone from (endpoint, rank). It returns how many
// hashes were unknown or held no copy on m; those are counted, not errors,
// because eviction and missed events make them normal.
func (ix *Index) Remove(endpoint string, rank int, hashes []uint64, m Medium) (unknown int, err error) {
	hd, err := ix.holderFor(endpoint, rank, false)
	if err != nil {
		return 0, fmt.Errorf("removing blocks: %w", err)
	}
	if hd == nil {
		ix.stats.unknownRemoved.Add(int64(len(hashes)))
		return len(hashes), nil
	}
	hd.mu.Lock()
	for base := 0; base < len(hashes); base += eventBatch {
		batch := hashes[base:min(base+eventBatch, len(hashes))]
		unknown += len(batch) - ix.removeBatch(hd, batch, m)
	}
	ix.compact(hd)
	hd.mu.Unlock()
	// Counters that do not change are not written: each atomic add is a
	// full fence on x86.
	if n := len(hashes) - unknown; n > 0 {
		ix.stats.removedBlocks.Add(int64(n))
	}
	if unknown > 0 {
		ix.stats.unknownRemoved.Add(int64(unknown))
	}
	return unknown, nil
}

func (ix *Index) removeBlock(hd *holder, h uint64, m Medium) bool {
	key, ok := hd.rev.get(h)
	if !ok {
		return false
	}
	s := ix.shardOf(key)
	s.mu.Lock()
	found, gone := s.c.remove(key, hd.id, m)
	held := found || s.c.holds(key, hd.id)
	s.mu.Unlock()
	if gone {
		hd.live.Add(-1)
	}
	if gone || !held {
		// Evicted earlier (or gone now): the reverse entry has no more use.
		hd.rev.delete(h)
	}
	return found
}

// ClearRank applies AllBlocksCleared from (endpoint, rank): every confirmed
// entry of that holder goes. Predictions stay: they are per endpoint and may
// still come true. It returns how many entries were dropped.
func (ix *Index) ClearRank(endpoint string, rank int) (int, error) {
	hd, err := ix.holderFor(endpoint, rank, false)
	if err != nil {
		return 0, fmt.Errorf("clearing blocks: %w", err)
	}
	if hd == nil {
		return 0, nil
	}
	hd.mu.Lock()
	defer hd.mu.Unlock()
	return ix.clearLocked(hd), nil
}

func (ix *Index) clearLocked(hd *holder) int {
	n := 0
	hd.rev.all(func(_ uint64, key Key) {
		s := ix.shardOf(key)
		s.mu.Lock()
		if s.c.drop(key, hd.id) {
			n++
		}
		s.mu.Unlock()
	})
	hd.rev = revTable{}
	hd.live.Store(0)
	hd.orphans.Store(0)
	ix.stats.clearedEntries.Add(int64(n))
	return n
}

// ClearEndpoint forgets everything about endpoint: every rank's confirmed
// entries and every prediction (reported as Dropped). Use it when an
// endpoint's state is unknown (engine restart, unrecoverable event gap) or
// the endpoint left the pool. It returns how many entries were dropped.
func (ix *Index) ClearEndpoint(endpoint string) (int, error) {
	if endpoint == "" {
		return 0, fmt.Errorf("clearing endpoint: %w", ErrEndpoint)
	}
	ep, ok := ix.eps.lookup(endpoint)
	if !ok {
		return 0, nil
	}
	n := 0
	for _, hd := range ix.holders.ofEndpoint(ep) {
		hd.mu.Lock()
		n += ix.clearLocked(hd)
		hd.mu.Unlock()
	}
	now := ix.now()
	var out pending
	for i := range ix.shards {
		s := &ix.shards[i]
		s.mu.Lock()
		s.c.spec.dropEndpoint(ep, now, &out)
		s.mu.Unlock()
	}
	ix.report(out)
	return n, nil
}

// compact drops reverse entries whose key was evicted once they outnumber a
// quarter of the live ones, so eviction bounds the reverse maps too. The scan
// is paid for by the evictions that made the orphans.
func (ix *Index) compact(hd *holder) {
	if hd.orphans.Load() <= hd.live.Load()/4+1024 {
		return
	}
	hd.rev.keepIf(func(_ uint64, key Key) bool {
		s := ix.shardOf(key)
		s.mu.RLock()
		held := s.c.holds(key, hd.id)
		s.mu.RUnlock()
		return held
	})
	hd.orphans.Store(0)
}
