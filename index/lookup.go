package index

import (
	"sync"
	"unsafe"
)

// Match is what one candidate endpoint holds of a prompt's leading blocks.
type Match struct {
	// Confirmed counts leading blocks held per engine events, Speculative
	// those held only by prediction; together they are the length of the
	// endpoint's leading run, which stops at the first block it lacks.
	Confirmed, Speculative int
	// Weighted sums, over the confirmed blocks of the run, the weight of the
	// best medium holding each (Options.Weights); a scorer values it beside
	// Speculative times its trust in predictions.
	Weighted float64
}

// Blocks returns the length of the leading run.
func (m Match) Blocks() int { return m.Confirmed + m.Speculative }

// Lookup reports, for each of endpoints (same order), how many of the leading
// keys it holds. A block counts as confirmed when any data-parallel rank of
// the endpoint holds it (the router cannot pick the rank), and as speculative
// when only a live prediction does. The walk stops once no candidate can
// extend its run, so a miss at block 0 costs one batch of probes. dst is
// reused when large enough.
func (ix *Index) Lookup(keys []Key, endpoints []string, dst []Match) []Match {
	dst = resetMatches(dst, len(endpoints))
	if len(keys) == 0 || len(endpoints) == 0 {
		return dst
	}
	w := ix.getWalk()
	defer ix.putWalk(w)
	if !w.begin(&ix.eps, endpoints) {
		return dst
	}
	now, tick := ix.now(), ix.nextTick()
	for base := 0; base < len(keys); base += lookupBatch {
		if !ix.lookupBatch(w, keys[base:min(base+lookupBatch, len(keys))], base, now, tick, dst) {
			break
		}
	}
	return dst
}

// lookupBatch is how many keys Lookup probes under one set of read locks.
// Each lock operation is an atomic read-modify-write, which on x86 is a full
// fence, so probing key by key between them serializes every probe's cache
// (and TLB) miss; finding a batch's slots first lets those misses overlap.
const lookupBatch = 8

// lookupBatch read-locks the batch's shards, in ascending order so that two
// lookups can never wait on each other through pending writers, finds every
// key's slot, then marks and advances key by key. It reports whether any
// candidate is still alive.
func (ix *Index) lookupBatch(w *walk, batch []Key, base int, now int64, tick uint32, dst []Match) bool {
	var shards [lookupBatch]uint64
	locked := ix.batchShards(batch, &shards)
	for _, i := range locked {
		ix.shards[i].mu.RLock()
	}
	// Prefetch every key's home slots first (probeBatch): the probes below
	// branch on what they load, so without it a mispredicted probe exit
	// waits for its miss before the next key's loads issue.
	ix.probeBatch(batch)
	var slots [lookupBatch]*holderSlot
	var specs [lookupBatch]uint32
	for j, k := range batch {
		c := &ix.shardOf(k).c
		if slots[j] = c.keys.slot(k); slots[j] != nil {
			// A key's first two holders are in its slot. Prefetching the
			// first overflow entry of a key with more starts its cache miss
			// while the other keys' probes are still in flight; mark finds
			// it cached.
			c.prefetchOverflow(slots[j])
		}
		if c.spec.n > 0 { // no second probe in shards without predictions
			specs[j] = c.spec.heads.head(k)
		}
	}
	alive := true
	for j, k := range batch {
		w.mark(&ix.shardOf(k).c, slots[j], specs[j], now, tick, &ix.opts.Weights)
		if alive = w.advance(int32(base+j), dst); !alive {
			break
		}
	}
	for _, i := range locked {
		ix.shards[i].mu.RUnlock()
	}
	return alive
}

// insertSorted adds v to the ascending set s (at most lookupBatch long).
func insertSorted(s []uint64, v uint64) []uint64 {
	i := len(s)
	for i > 0 && s[i-1] > v {
		i--
	}
	if i > 0 && s[i-1] == v {
		return s
	}
	s = append(s, 0)
	copy(s[i+1:], s[i:])
	s[i] = v
	return s
}

func resetMatches(dst []Match, n int) []Match {
	if cap(dst) < n {
		return make([]Match, n)
	}
	dst = dst[:n]
	clear(dst)
	return dst
}

// walk is the per-call scratch of Lookup, pooled so a lookup allocates
// nothing: pos maps an endpoint id to its candidate slot, and per candidate
// it records at which key it was last seen and how.
type walk struct {
	pos   []int32 // endpoint id -> candidate index + 1
	alive []int32 // candidates whose run is unbroken
	conf  []int32 // key index at which a confirmed entry was last seen
	spec  []int32 // key index at which a live prediction was last seen
	w     []float64
	key   int32
	ids   []uint32
	// names and idOf remember how this walk last resolved each candidate
	// position (idOf -1: unknown) in owner's table, see resolve. Walks are
	// pooled across indexes, and ids are only valid in their own table.
	owner *endpoints
	names []string
	idOf  []int32
}

var walkPool = sync.Pool{New: func() any { return new(walk) }}

func (ix *Index) getWalk() *walk { return walkPool.Get().(*walk) }

func (ix *Index) putWalk(w *walk) {
	for _, id := range w.ids {
		w.pos[id] = 0
	}
	w.ids = w.ids[:0]
	walkPool.Put(w)
}

// begin resolves candidate names; it reports false when none is known, in
// which case every match is zero.
func (w *walk) begin(eps *endpoints, names []string) bool {
	n := len(names)
	w.alive, w.conf, w.spec, w.w = w.alive[:0], grow32(w.conf, n), grow32(w.spec, n), growF(w.w, n)
	w.resolve(eps, names)
	for c, id := range w.idOf[:n] {
		if id < 0 || w.pos[id] != 0 {
			continue // unknown, or a duplicate candidate (reported as zero)
		}
		w.pos[id] = int32(c) + 1
		w.ids = append(w.ids, uint32(id))
		w.alive = append(w.alive, int32(c))
		w.conf[c], w.spec[c] = -1, -1
	}
	w.key = 0
	return len(w.alive) > 0
}

// resolve sets idOf[c] to the endpoint id of names[c]. Hashing 512 names
// costs about 10 us, yet a router passes the same pool's name strings on
// every call, so a position whose name is the very string resolved last time
// (same data pointer and length) reuses its id. The cache holds that string,
// so its memory cannot have been reused for other bytes, and interned ids
// never change; unknown names are resolved again, as they may be interned
// since.
func (w *walk) resolve(eps *endpoints, names []string) {
	if cap(w.idOf) < len(names) {
		w.names, w.idOf = make([]string, len(names)), make([]int32, len(names))
		w.owner = nil
	}
	w.names, w.idOf = w.names[:len(names)], w.idOf[:len(names)]
	if w.owner != eps {
		w.idOf = w.idOf[:cap(w.idOf)]
		for c := range w.idOf {
			w.idOf[c] = -1
		}
		w.idOf, w.owner = w.idOf[:len(names)], eps
	}
	locked := false
	for c, name := range names {
		if w.idOf[c] >= 0 && sameString(w.names[c], name) {
			continue
		}
		if !locked {
			eps.mu.RLock()
			locked = true
		}
		id, ok := eps.ids[name]
		w.names[c], w.idOf[c] = name, -1
		if ok {
			w.idOf[c] = int32(id)
		}
	}
	if !locked {
		return
	}
	if len(w.pos) < len(eps.names) {
		pos := make([]int32, len(eps.names)+len(eps.names)/4)
		copy(pos, w.pos)
		w.pos = pos
	}
	eps.mu.RUnlock()
}

func sameString(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}

// mark records which candidates hold a key whose slot in c is slot (nil when
// absent) and whose first prediction is spec (1-based, 0 when none); the
// caller holds c's read lock.
func (w *walk) mark(c *core, slot *holderSlot, spec uint32, now int64, tick uint32, wt *Weights) {
	ki := w.key
	if slot != nil {
		touchSlot(&slot.keySlot, tick)
		// One loop over the inline holders, then the overflow list, so its
		// body is written (and inlined) once.
		j, next := 0, overflowOf(slot)
	holders:
		for {
			var h holderID
			var r refs
			switch {
			case j < len(slot.in) && slot.in[j].h != 0:
				h, r = slot.in[j].holder(), slot.in[j].refs
				j++
			case next != 0:
				e := c.at(next)
				h, r, next = e.holder, e.refs, e.next
				j = len(slot.in) // compact: no inline place is used after an empty one
			default:
				break holders
			}
			if cand := w.candidate(h.endpoint()); cand >= 0 {
				if w.conf[cand] != ki {
					w.conf[cand], w.w[cand] = ki, 0
				}
				w.w[cand] = max(w.w[cand], r.best(wt))
			}
		}
	}
	for i := spec; i != 0; i = c.spec.at(i).next {
		s := c.spec.at(i)
		if cand := w.candidate(s.endpoint()); cand >= 0 && now < s.expires {
			w.spec[cand] = ki
		}
	}
}

func (w *walk) candidate(ep uint32) int32 {
	if int(ep) >= len(w.pos) {
		return -1 // interned after this lookup began: not a candidate
	}
	return w.pos[ep] - 1
}

// advance credits candidates that held key number ki and drops the rest from
// the walk; it reports whether any candidate is still alive.
func (w *walk) advance(ki int32, dst []Match) bool {
	alive := w.alive[:0]
	for _, c := range w.alive {
		switch {
		case w.conf[c] == ki:
			dst[c].Confirmed++
			dst[c].Weighted += w.w[c]
		case w.spec[c] == ki:
			dst[c].Speculative++
		default:
			continue
		}
		alive = append(alive, c)
	}
	w.alive = alive
	w.key = ki + 1
	return len(alive) > 0
}

func grow32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

func growF(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}
