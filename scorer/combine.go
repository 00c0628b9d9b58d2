package scorer

import (
	"math/rand/v2"

	"github.com/warmroute/warmroute/index"
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

// combine returns each candidate's total. The prefix and load components
// (and anti-herding) are computed in one pass over the candidates, after one
// pass for the load range, rather than a pass per component and per weight
// (at 512 candidates each pass is a few microseconds of a decision); the
// totals are the same floating-point sums, in the same order, as adding
// each component's Score (prefixScore, discountHerd, loadScore) in turn,
// which TestCombineFusedMatchesComponents checks. The engine component,
// which needs the median of the reporting candidates, keeps its own pass.
func (c *combiner) combine(f *field) []float64 {
	n := len(f.endpoints)
	c.total = resize(c.total, n)
	c.herded = 0
	sum := 0.0
	prefix := f.blocks > 0 && c.w.prefix > 0
	load := c.w.load > 0
	if prefix || load {
		c.herded = fusePrefixLoad(f, c.total, c.w, prefix, load)
		if prefix {
			sum += c.w.prefix
		}
		if load {
			sum += c.w.load
		}
	}
	if c.engine != nil && c.w.engine > 0 {
		c.part = resize(c.part, n)
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

// fusePrefixLoad adds the weighted prefix score (discounted as discountHerd
// does) and load score of each candidate to total, as prefixScore,
// discountHerd and loadScore followed by combiner.add would; it returns how
// many candidates anti-herding discounted.
func fusePrefixLoad(f *field, total []float64, w weights, prefix, load bool) (herded int) {
	lo, hi := f.loads[0], f.loads[0]
	for _, l := range f.loads[1:] {
		lo.inflight, hi.inflight = min(lo.inflight, l.inflight), max(hi.inflight, l.inflight)
		lo.prefill, hi.prefill = min(lo.prefill, l.prefill), max(hi.prefill, l.prefill)
	}
	herd := prefix && w.herdMargin > 0
	blocks := float64(f.blocks)
	loads := f.loads[:len(total)]
	var matches []index.Match
	var trust []float64
	if prefix {
		matches, trust = f.matches[:len(total)], f.trust[:len(total)]
	}
	for i, l := range loads {
		t := total[i]
		if prefix {
			m := matches[i]
			p := (m.Weighted + float64(m.Speculative)*trust[i]) / blocks
			if herd {
				// lo.inflight is the least-loaded candidate's, as in discountHerd.
				if excess := float64(l.inflight-lo.inflight) - w.herdMargin; excess > 0 && p > 0 {
					p *= max(0, 1-excess/w.herdMargin)
					herded++
				}
			}
			t += w.prefix * clamp01(p)
		}
		if load {
			t += w.load * clamp01((spread(l.inflight, lo.inflight, hi.inflight)+spread(l.prefill, lo.prefill, hi.prefill))/2)
		}
		total[i] = t
	}
	return herded
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
	top := maxFloat(total)
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

// maxFloat is the max builtin folded over v (which must not be empty), with
// the same result for NaN (any NaN gives NaN) and signed zeros (+0 beats
// -0): max is commutative and associative on those too, so the four
// interleaved running maxima combine to what one running maximum gives.
// One would make each element wait for the previous one's max, a chain of
// several instructions: at 512 candidates that chain was about 2 us of a
// decision.
func maxFloat(v []float64) float64 {
	m0, m1, m2, m3 := v[0], v[0], v[0], v[0]
	i := 1
	for ; i+4 <= len(v); i += 4 {
		m0, m1, m2, m3 = max(m0, v[i]), max(m1, v[i+1]), max(m2, v[i+2]), max(m3, v[i+3])
	}
	for ; i < len(v); i++ {
		m0 = max(m0, v[i])
	}
	return max(max(m0, m1), max(m2, m3))
}

// topK appends to out the indexes of the k highest totals other than skip,
// best first, the lower index first among equal totals. k is small (the
// fallback count), so one scan keeping the k best so far in order beats
// both sorting and topKScan's k scans, which it agrees with exactly
// (FuzzTopK); a NaN total (infinite weights) hands the call to topKScan,
// whose order NaN decides in its own way.
func topK(out []int, total []float64, skip, k int) []int {
	k = min(k, len(total)-1)
	if k <= 0 {
		return out
	}
	base := len(out)
	// floor is the total of the last kept index, read only once k are kept
	// (the k-th best so far): in a local, the common case (a total not above
	// it) costs one compare instead of two dependent loads.
	var floor float64
	for i, v := range total {
		if i == skip {
			continue
		}
		if v != v {
			return topKScan(out[:base], total, skip, k)
		}
		kept := out[base:]
		if len(kept) == k && !(v > floor) {
			continue // not above the k-th best
		}
		// The first kept total v beats; a later index never displaces an
		// equal earlier one.
		j := 0
		for j < len(kept) && !(v > total[kept[j]]) {
			j++
		}
		if len(kept) < k {
			out = append(out, 0)
			kept = out[base:]
		}
		copy(kept[j+1:], kept[j:len(kept)-1])
		kept[j] = i
		floor = total[kept[len(kept)-1]]
	}
	return out
}

// topKScan is topK by k scans, each taking the highest remaining total (the
// lower index among equals); k must be in [1, len(total)-1].
func topKScan(out []int, total []float64, skip, k int) []int {
	base := len(out)
	for len(out)-base < k {
		pick := -1
		for i, v := range total {
			if i == skip || contains(out[base:], i) {
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
