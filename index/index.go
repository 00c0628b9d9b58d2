package index

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Index is the confirmed-plus-speculative prefix index. Build it with New; the
// zero value is not usable. Safe for concurrent use (see the package
// documentation for the locking rules).
type Index struct {
	opts    Options
	shards  []shard
	mask    uint64
	budget  int64 // per shard
	grace   int64
	ops     atomic.Uint64
	eps     endpoints
	holders holders
	stats   counters
	scratch sync.Pool // *[]Key for Store
}

// shard is one core behind its lock, padded so neighbouring locks do not
// share a cache line.
type shard struct {
	mu sync.RWMutex
	c  core
	_  [64]byte
}

// New returns an empty index configured by opts.
func New(opts Options) (*Index, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.WithDefaults()
	ix := &Index{
		opts:   opts,
		shards: make([]shard, opts.Shards),
		mask:   uint64(opts.Shards - 1),
		budget: max(opts.MaxBytes/int64(opts.Shards), 1),
		grace:  int64(opts.Grace),
	}
	for i := range ix.shards {
		ix.shards[i].c = newCore(ix.onEvict)
	}
	ix.scratch.New = func() any { s := make([]Key, 0, 256); return &s }
	if err := opts.Metrics.bind(ix); err != nil {
		return nil, err
	}
	return ix, nil
}

// BlockSize returns the block size keys are computed with.
func (ix *Index) BlockSize() int { return ix.opts.BlockSize }

// shardOf spreads keys by their high bits; keys are hash outputs, so any bits
// are uniform, and the maps inside use the low ones.
func (ix *Index) shardOf(k Key) *shard { return &ix.shards[ix.shardIndex(k)] }

func (ix *Index) shardIndex(k Key) uint64 { return (uint64(k) >> 40) & ix.mask }

func (ix *Index) now() int64 { return ix.opts.Now().UnixNano() }

// nextTick advances the recency clock. One tick spans 16 calls, so a Lookup
// rarely needs to write a node's stamp (the write is skipped when unchanged);
// eviction needs order, not precision.
func (ix *Index) nextTick() uint32 { return uint32(ix.ops.Add(1) >> 4) }

// tick reads the recency clock without advancing it.
func (ix *Index) tick() uint32 { return uint32(ix.ops.Load() >> 4) }

// onEvict runs under a shard lock when eviction removes a holder's entry.
func (ix *Index) onEvict(h holderID) {
	ix.stats.evictedEntries.Add(1)
	if hd := ix.holders.get(h); hd != nil {
		hd.live.Add(-1)
		hd.orphans.Add(1)
	}
}

// afterWrite expires due predictions and enforces the shard's budget; the
// caller holds the shard's write lock.
func (ix *Index) afterWrite(s *shard, now int64, out *pending) {
	s.c.spec.expire(now, ix.grace, out)
	if n := s.c.evict(ix.budget, now, ix.tick(), out); n > 0 {
		ix.stats.evictedKeys.Add(int64(n))
	}
}

// report hands outcomes to the observer; no lock may be held.
func (ix *Index) report(out pending) {
	for _, o := range out {
		if o.remote {
			ix.stats.remoteOutcomes[o.kind].Add(int64(o.blocks))
		} else {
			ix.stats.outcomes[o.kind].Add(int64(o.blocks))
		}
		if ix.opts.Observer == nil {
			continue
		}
		ix.opts.Observer.Observe(Outcome{
			Kind: o.kind, Endpoint: ix.eps.name(o.endpoint), Decision: o.decision,
			Blocks: o.blocks, Latency: o.latency, Remote: o.remote,
		})
	}
}

// Speculate predicts that endpoint will hold keys because decision d routed a
// request there, for ttl. Keys the endpoint already holds confirmed are
// skipped; a live prediction is kept and its expiry extended. It returns how
// many entries it created.
func (ix *Index) Speculate(endpoint string, keys []Key, d DecisionID, ttl time.Duration) (int, error) {
	now := ix.now()
	return ix.speculate(endpoint, keys, d, now, now+int64(ttl), false)
}

// speculate inserts predictions of keys on endpoint made at at and live until
// expires (Unix nanoseconds), flagged remote when another replica made them.
func (ix *Index) speculate(endpoint string, keys []Key, d DecisionID, at, expires int64, remote bool) (int, error) {
	if endpoint == "" {
		return 0, fmt.Errorf("speculating %d keys: %w", len(keys), ErrEndpoint)
	}
	ep, err := ix.eps.intern(endpoint)
	if err != nil {
		return 0, fmt.Errorf("speculating on %q: too many endpoints: %w", endpoint, err)
	}
	now := ix.now()
	out := getPending()
	defer putPending(out)
	created := 0
	if ix.groups(len(keys)) {
		created = ix.speculateGrouped(keys, ep, d, at, expires, now, remote, out)
	} else {
		for base := 0; base < len(keys); base += lookupBatch {
			created += ix.speculateBatch(keys[base:min(base+lookupBatch, len(keys))], ep, d, at, expires, now, remote, out)
		}
	}
	if remote {
		ix.stats.remoteSpeculated.Add(int64(created))
	} else {
		ix.stats.speculated.Add(int64(created))
	}
	ix.report(*out)
	return created, nil
}

// speculateBatch inserts up to lookupBatch predictions under one set of
// write locks, taken in ascending shard order as Lookup takes its read locks.
// As in Lookup, every key's slots are probed before any entry is written, so
// the probes' cache misses overlap instead of following one another.
func (ix *Index) speculateBatch(batch []Key, ep uint32, d DecisionID, at, expires, now int64, remote bool, out *pending) int {
	var buf [lookupBatch]uint64
	shards := ix.lockBatch(batch, &buf)
	ix.probeBatch(batch)
	created := 0
	for _, k := range batch {
		c := &ix.shardOf(k).c
		if !c.holdsEndpoint(k, ep) && c.spec.insert(k, ep, d, at, expires, remote) {
			created++
		}
	}
	for _, i := range shards {
		s := &ix.shards[i]
		ix.afterWrite(s, now, out)
		s.mu.Unlock()
	}
	return created
}

// Sweep ends expired predictions (as StaleExpiry once Options.Grace has passed).
// Writes sweep the shards they touch; the owner calls Sweep periodically, for
// example every 100 ms, so quiet shards report their outcomes too.
func (ix *Index) Sweep() {
	now := ix.now()
	var out pending
	for i := range ix.shards {
		s := &ix.shards[i]
		s.mu.Lock()
		s.c.spec.expire(now, ix.grace, &out)
		s.mu.Unlock()
	}
	ix.report(out)
}
