package scorer

import (
	"math/rand/v2"
)

// weights are the resolved scoring settings.
type weights struct {
	prefix, load, engine float64
	herdMargin           float64
	epsilon              float64
}

func resolveWeights(global ScoringConfig) weights {
	c := global.WithDefaults()
	return weights{
		prefix: *c.PrefixWeight, load: *c.LoadWeight, engine: *c.EngineLoadWeight,
		herdMargin: *c.HerdMargin, epsilon: *c.TieEpsilon,
	}
}

// combiner weighs the components into one total per candidate, normalised by
// the sum of the weights in use so totals stay in [0,1] and TieEpsilon means
// the same whatever the weights. Not safe for concurrent use: one per decision.
type combiner struct {
	w      weights
	engine EngineLoad // nil: no engine gauges wired
	// scratch, reused across components
	part  []float64
	total []float64
	// herded counts candidates whose prefix score anti-herding discounted.
	herded int
}

func (c *combiner) combine(f *field) []float64 {
	n := len(f.endpoints)
	c.total = resize(c.total, n)
	c.part = resize(c.part, n)
	sum := 0.0
	if f.blocks > 0 && c.w.prefix > 0 {
		prefixScore{}.Score(f, c.part)
		c.herded = discountHerd(f, c.part, c.w.herdMargin)
		c.add(c.w.prefix, &sum)
	}
	if c.w.load > 0 {
		loadScore{}.Score(f, c.part)
		c.add(c.w.load, &sum)
	}
	if c.engine != nil && c.w.engine > 0 {
		engineScore{c.engine}.Score(f, c.part)
		c.add(c.w.engine, &sum)
	}
	if sum > 0 {
		for i := range c.total {
			c.total[i] /= sum
		}
	}
	return c.total
}

func (c *combiner) add(w float64, sum *float64) {
	for i, v := range c.part {
		c.total[i] += w * clamp01(v)
	}
	*sum += w
}

// discountHerd keeps a hot shared prefix from pinning all its traffic to
// one endpoint: once a candidate carries more than margin in-flight requests
// above the least-loaded candidate, its prefix score shrinks linearly,
// reaching 0 at twice the margin. Requests then spill to other endpoints,
// which warm up and share the prefix. A zero margin disables it. It returns
// how many candidates were discounted.
func discountHerd(f *field, prefix []float64, margin float64) int {
	if margin <= 0 {
		return 0
	}
	least := f.loads[0].inflight
	for _, l := range f.loads[1:] {
		least = min(least, l.inflight)
	}
	n := 0
	for i, l := range f.loads {
		excess := float64(l.inflight-least) - margin
		if excess > 0 && prefix[i] > 0 {
			prefix[i] *= max(0, 1-excess/margin)
			n++
		}
	}
	return n
}

// choose returns the chosen candidate and up to k fallbacks in descending
// score. Candidates within epsilon of the best are equivalent and one is
// taken uniformly at random, so router replicas seeing the same state do not
// all pick the same endpoint. ties reports how many were equivalent.
func choose(total []float64, epsilon float64, k int, fb []int) (best int, fallbacks []int, ties int) {
	top := total[0]
	for _, v := range total[1:] {
		top = max(top, v)
	}
	for i, v := range total {
		if v >= top-epsilon {
			ties++
			if rand.IntN(ties) == 0 { // reservoir sampling: uniform over ties
				best = i
			}
		}
	}
	return best, topK(fb[:0], total, best, k), ties
}

// topK appends to out the indexes of the k highest totals other than skip,
// best first. k is small (the fallback count), so repeated scans beat sorting.
func topK(out []int, total []float64, skip, k int) []int {
	k = min(k, len(total)-1)
	if k <= 0 {
		return out
	}
	for len(out) < k {
		pick := -1
		for i, v := range total {
			if i == skip || contains(out, i) {
				continue
			}
			if pick < 0 || v > total[pick] {
				pick = i
			}
		}
		out = append(out, pick)
	}
	return out
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func resize(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	s = s[:n]
	clear(s)
	return s
}
