package scorer

import (
	"slices"

	"github.com/warmroute/warmroute/index"
)

// field is one decision's candidates and what is known about each, in the
// same order. Scorers read it; none writes it.
type field struct {
	endpoints []string
	matches   []index.Match
	loads     []loadSample
	// trust is each candidate's weight for speculative blocks.
	trust []float64
	// blocks is how many full blocks the prompt has; 0 means no prefix
	// information (load-only routing or a prompt shorter than one block).
	blocks int
}

// A component scores every candidate of a field into dst (same order), each
// value meant to lie in [0,1] with 1 the most attractive. The combiner clamps
// whatever a component returns, so one wrong component cannot dominate.
type component interface {
	Score(f *field, dst []float64)
}

// prefixScore is the fraction of the prompt's blocks the candidate holds in
// its leading run: confirmed blocks count by their medium weight
// (Match.Weighted, 1 for GPU), speculative blocks by the endpoint's trust in
// predictions. Range [0,1]; 0 for every candidate when the prompt has no
// full block.
type prefixScore struct{}

func (prefixScore) Score(f *field, dst []float64) {
	for i, m := range f.matches {
		if f.blocks == 0 {
			dst[i] = 0
			continue
		}
		dst[i] = (m.Weighted + float64(m.Speculative)*f.trust[i]) / float64(f.blocks)
	}
}

// loadScore ranks router-tracked load: the mean of in-flight requests and
// queued prefill tokens, each scaled between the least (1) and most (0)
// loaded candidate. Range [0,1]; 1 for every candidate when all are equal.
type loadScore struct{}

func (loadScore) Score(f *field, dst []float64) {
	lo, hi := f.loads[0], f.loads[0]
	for _, l := range f.loads[1:] {
		lo.inflight, hi.inflight = min(lo.inflight, l.inflight), max(hi.inflight, l.inflight)
		lo.prefill, hi.prefill = min(lo.prefill, l.prefill), max(hi.prefill, l.prefill)
	}
	for i, l := range f.loads {
		dst[i] = (spread(l.inflight, lo.inflight, hi.inflight) + spread(l.prefill, lo.prefill, hi.prefill)) / 2
	}
}

// spread maps v in [lo,hi] to [1,0]; a zero-width range maps to 1.
func spread(v, lo, hi int64) float64 {
	if hi == lo {
		return 1
	}
	return float64(hi-v) / float64(hi-lo)
}

// EngineLoad reports an endpoint's own load gauges, as relays publish them:
// running and waiting requests and KV-cache usage in [0,1]. ok is false when
// nothing fresh is known. Implementations must be safe for concurrent use and
// fast: the scorer calls it once per candidate per decision.
type EngineLoad interface {
	EngineLoad(endpoint string) (running, waiting, kvUsage float64, ok bool)
}

// engineScore ranks the engines' own gauges: the mean of the queue (running
// plus waiting, scaled between the least and most loaded reporting
// candidate) and free KV cache (1 - usage). Range [0,1]. A candidate without
// fresh gauges gets the median score of the candidates that report, so that
// missing data neither helps nor hurts relative to them (a fixed 0.5 would
// lose every cold request to an idle reporter scoring 1); with no reporter
// every candidate gets the neutral 0.5.
type engineScore struct{ src EngineLoad }

// neutral is the score of a candidate a component knows nothing about.
const neutral = 0.5

func (e engineScore) Score(f *field, dst []float64) {
	queue := make([]float64, len(f.endpoints))
	lo, hi, any := 0.0, 0.0, false
	for i, ep := range f.endpoints {
		running, waiting, kv, ok := e.src.EngineLoad(ep)
		q := running + waiting
		if !ok || !(q >= 0) { // also rejects NaN gauges
			dst[i], queue[i] = -1, -1
			continue
		}
		queue[i], dst[i] = q, 1-clamp01(kv)
		if kv != kv { // NaN usage: unknown, not empty
			dst[i] = neutral
		}
		if !any {
			lo, hi, any = q, q, true
		}
		lo, hi = min(lo, q), max(hi, q)
	}
	var reported []float64
	for i := range dst {
		switch {
		case queue[i] < 0:
			continue
		case hi == lo:
			dst[i] = (1 + dst[i]) / 2
		default:
			dst[i] = ((hi-queue[i])/(hi-lo) + dst[i]) / 2
		}
		reported = append(reported, dst[i])
	}
	missing := median(reported)
	for i := range dst {
		if queue[i] < 0 {
			dst[i] = missing
		}
	}
}

// median of v (sorted in place), neutral for none.
func median(v []float64) float64 {
	if len(v) == 0 {
		return neutral
	}
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

func clamp01(v float64) float64 {
	switch {
	case v > 1:
		return 1
	case v >= 0:
		return v
	}
	return 0 // negative and NaN
}
