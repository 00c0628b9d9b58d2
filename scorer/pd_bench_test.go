package scorer

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/warmroute/warmroute/internal/benchcpu"
)

// BenchmarkDecisionPD times a whole decision (keys, lookup, scoring,
// commit with speculative insert, release) in a P/D pool, half prefill and
// half decode endpoints, beside the same decision in a plain pool of the
// same endpoints, interleaved in one run: the P/D decision looks up and
// scores only the prefillers, then scores the decoders on load.
func BenchmarkDecisionPD(b *testing.B) {
	const blocks = 1_000_000
	for _, n := range []int{8, 64} {
		eps := benchEndpoints(n)
		ix := benchIndex(b, eps, blocks)
		roles := map[string]Role{}
		for i, ep := range eps {
			roles[ep] = []Role{RolePrefill, RoleDecode}[i%2]
		}
		for _, pool := range []string{"plain", "pd"} {
			b.Run(fmt.Sprintf("endpoints=%d/pool=%s", n, pool), func(b *testing.B) {
				pc := PoolConfig{Name: "m", Endpoints: eps}
				if pool == "pd" {
					pc.Roles = roles
				}
				s := New(NewPools([]PoolConfig{pc}, ""), &Load{}, Options{
					Index: ix, Tokens: map[string]Tokens{"m": idTokens{}}, Fallbacks: 2,
				})
				benchPickLoop(b, s, blocks, pool == "pd")
			})
		}
	}
}

func benchPickLoop(b *testing.B, s *Scorer, blocks int, pd bool) {
	ctx := context.Background()
	lat := make([]time.Duration, 0, 1<<16)
	var prompt []int
	req := &Request{Kind: KindCompletion, Model: "m", PromptTokenIDs: [][]int{nil}}
	b.ReportAllocs()
	i := 0
	cpu := benchcpu.Start()
	for b.Loop() {
		prompt = newPrompt(prompt, i, blocks)
		req.PromptTokenIDs[0] = prompt
		start := time.Now()
		d, err := s.Pick(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		if pd && d.Prefiller == "" {
			b.Fatalf("P/D pool decision not disaggregated: %s", d.Reason)
		}
		d.Commit()
		d.Release()
		lat = append(lat, time.Since(start))
		i++
	}
	cpu.Report(b)
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
}
