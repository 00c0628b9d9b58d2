package index

import "sync"

// A long prediction (a 100k-token prompt is about 6,600 blocks) is inserted
// shard by shard rather than lookupBatch keys at a time: its keys are
// grouped by shard (a stable counting sort), and each shard is write-locked
// once per specRun of its keys, so the lock operations and the
// expiry-and-budget pass (afterSpeculate) run once per shard run instead of once
// per eight keys. Within a run the keys are still probed eight at a time
// before any is written, so the probes' cache misses overlap.
//
// Grouping pays once a shard gets several batches' worth of keys: with one
// or two keys per shard a run could not overlap its probes' misses, which
// eight keys of eight shards do.
const (
	// specGroupPerShard is the mean keys per shard from which a prediction's
	// keys are grouped.
	specGroupPerShard = 2 * lookupBatch
	// specRun bounds the keys inserted under one hold of a shard's lock
	// (some tens of microseconds), so lookups on that shard wait little.
	specRun = 64
	// maxPooledGroup bounds the key buffer a pooled grouping keeps.
	maxPooledGroup = 1 << 16
)

// shardGroups is the scratch of one grouped insert: keys ordered by shard,
// and end[s] the end of shard s's keys in that order (shard s starts where
// shard s-1 ends).
type shardGroups struct {
	keys []Key
	end  []int32
}

// groups reports whether a prediction of n keys is inserted grouped.
func (ix *Index) groups(n int) bool { return n >= specGroupPerShard*len(ix.shards) }

var groupPool = sync.Pool{New: func() any { return new(shardGroups) }}

// groupByShard orders keys by shard, keeping their order within a shard.
func (ix *Index) groupByShard(keys []Key) *shardGroups {
	g := groupPool.Get().(*shardGroups)
	n := len(ix.shards)
	if cap(g.end) < n {
		g.end = make([]int32, n)
	}
	g.end = g.end[:n]
	clear(g.end)
	for _, k := range keys {
		g.end[ix.shardIndex(k)]++
	}
	sum := int32(0)
	for s, c := range g.end { // counts -> starts
		g.end[s], sum = sum, sum+c
	}
	if cap(g.keys) < len(keys) {
		g.keys = make([]Key, len(keys))
	}
	g.keys = g.keys[:len(keys)]
	for _, k := range keys { // starts -> ends
		s := ix.shardIndex(k)
		g.keys[g.end[s]] = k
		g.end[s]++
	}
	return g
}

func putGroups(g *shardGroups) {
	if cap(g.keys) > maxPooledGroup {
		g.keys = nil
	}
	groupPool.Put(g)
}

// speculateGrouped is speculateBatch over a long prediction, shard by shard.
func (ix *Index) speculateGrouped(keys []Key, sp *speculation) int {
	g := ix.groupByShard(keys)
	defer putGroups(g)
	created, lo := 0, 0
	for s, end := range g.end {
		for hi := int(end); lo < hi; {
			run := g.keys[lo:min(lo+specRun, hi)]
			created += ix.speculateShard(&ix.shards[s], run, sp)
			lo += len(run)
		}
	}
	return created
}

// speculateShard inserts predictions of keys, all of shard s, under one hold
// of its write lock.
func (ix *Index) speculateShard(s *shard, keys []Key, sp *speculation) int {
	s.mu.Lock()
	created := 0
	for base := 0; base < len(keys); base += lookupBatch {
		batch := keys[base:min(base+lookupBatch, len(keys))]
		ix.probeSpeculation(batch, sp)
		for _, k := range batch {
			if sp.insert(&s.c, k) {
				created++
			}
		}
	}
	ix.afterSpeculate(s, sp)
	s.mu.Unlock()
	return created
}
