package scorer

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/index/ttl"
)

// BenchmarkDecisionTTLOverhead measures what the TTL controller's lifecycle
// accounting (Begin on commit, TTL and Trust per speculatively matched
// candidate, Observe on index outcomes) adds to a whole routing decision.
// Two scorers share one index, one with the built-in static policy and one
// with a real adaptive controller, and decisions alternate between them, so
// both see the same heap, caches and machine load; it reports each one's
// median and the ratio of the medians.
func BenchmarkDecisionTTLOverhead(b *testing.B) {
	const n, blocks = 64, 1_000_000
	ctrl, err := ttl.New(ttl.Options{Config: ttl.Config{Mode: ttl.ModeAdaptive}})
	if err != nil {
		b.Fatal(err)
	}
	eps := benchEndpoints(n)
	ix := benchIndexWith(b, eps, blocks, index.Options{Observer: ctrl})
	newScorer := func(p TTLPolicy) *Scorer {
		return New(NewPools([]PoolConfig{{Name: "m", Endpoints: eps}}, ""), &Load{}, Options{
			Index: ix, Tokens: map[string]Tokens{"m": idTokens{}}, Fallbacks: 2, TTL: p,
		})
	}
	scorers := [2]*Scorer{newScorer(nil), newScorer(ctrl)}
	prompts := benchPrompts(blocks)
	var lat [2][]time.Duration
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		k := i % 2
		// The two scorers walk the prompts half a cycle apart, so each meets
		// a prompt as long after the other's decision on it as the other
		// does: neither inherits the other's fresh predictions first.
		p := prompts[(i/2+k*len(prompts)/2)%len(prompts)]
		req := &Request{Kind: KindCompletion, Model: "m", PromptTokenIDs: [][]int{p}}
		start := time.Now()
		d, err := scorers[k].Pick(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		d.Commit()
		d.Release()
		lat[k] = append(lat[k], time.Since(start))
		i++
	}
	median := func(l []time.Duration) float64 {
		slices.Sort(l)
		return float64(l[len(l)/2].Nanoseconds())
	}
	static, controlled := median(lat[0]), median(lat[1])
	b.ReportMetric(static, "static-p50-ns")
	b.ReportMetric(controlled, "controller-p50-ns")
	b.ReportMetric(controlled/static, "ratio")
}
