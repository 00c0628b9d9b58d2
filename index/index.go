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

// Expiry work is bounded per lock hold. Predictions come due in bursts: the
// ones a burst of decisions made, all together a TTL (and grace) later, or
// all that fell due while the process was not scheduled. Ending thousands of
// them under the lock of whichever write touches the shard next would put
// that write (often a routing decision's speculative insert) in the tail,
// so a write ends at most writeExpiries of its shard's due references, more
// than the few a write makes come due in steady state, and Sweep drains the
// rest sweepExpiries at a time, releasing the lock between runs. A due
// prediction no longer matches in Lookup, so a delayed ending changes only
// when its outcome is reported.
const (
	writeExpiries = 64
	sweepExpiries = 1024
)

// afterWrite expires due predictions (up to writeExpiries) and enforces the
// shard's budget; the caller holds the shard's write lock. A speculative
// insert also bounds its expiries over all the shards it touches, to
// writeExpiries plus two per key, so a routing decision's commit ends at
// most a few hundred (afterSpeculate).
func (ix *Index) afterWrite(s *shard, now int64, out *pending) {
	s.c.spec.expire(now, ix.grace, writeExpiries, out)
	ix.evict(s, now, out)
}

// evict enforces the shard's budget; the caller holds its write lock.
func (ix *Index) evict(s *shard, now int64, out *pending) {
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

// speculation is one speculate call's prediction and its budget of expiry
// references (see writeExpiries).
type speculation struct {
	ep               uint32
	d                DecisionID
	at, expires, now int64
	remote           bool
	out              *pending
	expiries         int
	// deferred is SpeculateDeferred's insert: a routed prompt's
	// continuation, each key predicted without checking whether the
	// endpoint holds it confirmed, the shards' expiry left to the caller.
	deferred bool
}

// speculate inserts predictions of keys on endpoint made at at and live until
// expires (Unix nanoseconds), flagged remote when another replica made them.
func (ix *Index) speculate(endpoint string, keys []Key, d DecisionID, at, expires int64, remote bool) (int, error) {
	return ix.speculateKeys(endpoint, keys, &speculation{d: d, at: at, expires: expires, remote: remote})
}

// speculateKeys inserts sp's predictions of keys on endpoint; sp's endpoint
// id, clock reading, outcome list and expiry budget are set here.
func (ix *Index) speculateKeys(endpoint string, keys []Key, sp *speculation) (int, error) {
	if endpoint == "" {
		return 0, fmt.Errorf("speculating %d keys: %w", len(keys), ErrEndpoint)
	}
	ep, err := ix.eps.intern(endpoint)
	if err != nil {
		return 0, fmt.Errorf("speculating on %q: too many endpoints: %w", endpoint, err)
	}
	out := getPending()
	defer putPending(out)
	sp.ep, sp.now, sp.out, sp.expiries = ep, ix.now(), out, writeExpiries+2*len(keys)
	created := 0
	if ix.groups(len(keys)) {
		created = ix.speculateGrouped(keys, sp)
	} else {
		for base := 0; base < len(keys); base += lookupBatch {
			created += ix.speculateBatch(keys[base:min(base+lookupBatch, len(keys))], sp)
		}
	}
	if sp.remote {
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
func (ix *Index) speculateBatch(batch []Key, sp *speculation) int {
	var buf [lookupBatch]uint64
	shards := ix.lockBatch(batch, buf[:])
	ix.probeSpeculation(batch, sp)
	ix.probeSpecWrites(shards)
	created := 0
	for _, k := range batch {
		if sp.insert(&ix.shardOf(k).c, k) {
			created++
		}
	}
	for _, i := range shards {
		s := &ix.shards[i]
		ix.afterSpeculate(s, sp)
		s.mu.Unlock()
	}
	return created
}

// insert predicts key in c unless the endpoint holds it confirmed (a
// deferred insert's keys, a continuation, are predicted without that check);
// it reports whether an entry was created.
func (sp *speculation) insert(c *core, k Key) bool {
	return (sp.deferred || !c.holdsEndpoint(k, sp.ep)) && c.spec.insert(k, sp.ep, sp.d, sp.at, sp.expires, sp.remote)
}

// probeSpeculation is probeBatch for an insert: a deferred one (a
// continuation) reads no confirmed slot, so only its prediction slots are
// loaded.
func (ix *Index) probeSpeculation(batch []Key, sp *speculation) {
	if sp.deferred {
		ix.probeHeads(batch)
	} else {
		ix.probeBatch(batch)
	}
}

// afterSpeculate is afterWrite within the call's expiry budget; a deferred
// speculation only enforces the budget (ExpireAfter expires later).
func (ix *Index) afterSpeculate(s *shard, sp *speculation) {
	if !sp.deferred {
		read, _ := s.c.spec.expire(sp.now, ix.grace, min(writeExpiries, sp.expiries), sp.out)
		sp.expiries = max(0, sp.expiries-read)
	}
	ix.evict(s, sp.now, sp.out)
}

// Sweep ends expired predictions (as StaleExpiry once Options.Grace has passed).
// Writes end up to writeExpiries of each shard they touch; the owner calls
// Sweep periodically, for example every 100 ms, so quiet shards report their
// outcomes too and a burst of due predictions is drained off the request path.
func (ix *Index) Sweep() {
	now := ix.now()
	var out pending
	for i := range ix.shards {
		s := &ix.shards[i]
		for more := true; more; {
			s.mu.Lock()
			_, more = s.c.spec.expire(now, ix.grace, sweepExpiries, &out)
			s.mu.Unlock()
		}
	}
	ix.report(out)
}
