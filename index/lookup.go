package index

import (
	"sync"
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
// extend its run, so a miss at block 0 costs one probe per key shard. dst is
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
	for i, k := range keys {
		s := ix.shardOf(k)
		s.mu.RLock()
		w.mark(&s.c, k, now, tick, &ix.opts.Weights)
		s.mu.RUnlock()
		if !w.advance(int32(i), dst) {
			break
		}
	}
	return dst
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
	eps.mu.RLock()
	defer eps.mu.RUnlock()
	if len(w.pos) < len(eps.names) {
		w.pos = make([]int32, len(eps.names)+len(eps.names)/4)
	}
	for c, name := range names {
		id, ok := eps.ids[name]
		if !ok || w.pos[id] != 0 {
			continue // unknown, or a duplicate candidate (reported as zero)
		}
		w.pos[id] = int32(c) + 1
		w.ids = append(w.ids, id)
		w.alive = append(w.alive, int32(c))
		w.conf[c], w.spec[c] = -1, -1
	}
	w.key = 0
	return len(w.alive) > 0
}

// mark records which candidates hold key; the caller holds c's read lock.
func (w *walk) mark(c *core, key Key, now int64, tick uint32, wt *Weights) {
	ki := w.key
	if head := c.keys[key]; head != 0 {
		touch(c.at(head), tick)
		for i := head; i != 0; i = c.at(i).next {
			e := c.at(i)
			if cand := w.candidate(e.holder.endpoint()); cand >= 0 {
				if w.conf[cand] != ki {
					w.conf[cand], w.w[cand] = ki, 0
				}
				w.w[cand] = max(w.w[cand], e.refs.best(wt))
			}
		}
	}
	if c.spec.n == 0 {
		return // skips a second map probe in shards without predictions
	}
	for i := c.spec.heads[key]; i != 0; i = c.spec.specs[i-1].next {
		s := &c.spec.specs[i-1]
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
