package scorer

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/warmroute/warmroute/index"
)

const (
	benchBS        = 16
	benchSeqBlocks = 64 // blocks per stored sequence
)

// benchIndex fills an index with `blocks` confirmed blocks: sequences of
// benchSeqBlocks blocks, each held by two of the endpoints.
func benchIndex(b *testing.B, endpoints []string, blocks int) *index.Index {
	return benchIndexWith(b, endpoints, blocks, index.Options{})
}

// benchIndexWith is benchIndex with further index options (block size and
// memory bound are the benchmark's).
func benchIndexWith(b *testing.B, endpoints []string, blocks int, opts index.Options) *index.Index {
	b.Helper()
	opts.BlockSize, opts.MaxBytes = benchBS, 16<<30
	ix, err := index.New(opts)
	if err != nil {
		b.Fatal(err)
	}
	toks := make([]uint32, benchSeqBlocks*benchBS)
	hashes := make([]uint64, benchSeqBlocks)
	for seq := range blocks / benchSeqBlocks {
		for i := range toks {
			toks[i] = uint32(seq*len(toks) + i)
		}
		for i := range hashes {
			hashes[i] = uint64(seq*benchSeqBlocks + i)
		}
		for r := range 2 {
			ep := endpoints[(seq+r)%len(endpoints)]
			if _, err := ix.Store(index.Stored{Endpoint: ep, Hashes: hashes, Tokens: toks, BlockSize: benchBS, Identity: index.Identity{Model: "m"}}); err != nil {
				b.Fatal(err)
			}
		}
	}
	return ix
}

// benchPrompts are 128-block prompts whose first half is a stored sequence.
func benchPrompts(blocks int) [][]int {
	seqs := blocks / benchSeqBlocks
	out := make([][]int, 256)
	for p := range out {
		seq := (p * 7919) % seqs
		ids := make([]int, 2*benchSeqBlocks*benchBS)
		for i := range ids {
			ids[i] = seq*benchSeqBlocks*benchBS + i // second half extends it, unseen
		}
		ids[benchSeqBlocks*benchBS] = 1<<31 + p // diverge right after the stored half
		out[p] = ids
	}
	return out
}

// BenchmarkDecision times a whole routing decision without tokenization
// (token ids given): keys, lookup over every endpoint, scoring, choice,
// commit (with speculative insert) and release. It reports p50 and p99 per
// decision besides the mean. Set WARMROUTE_BENCH_10M=1 to add 10M blocks.
func BenchmarkDecision(b *testing.B) {
	sizes := []int{1_000_000}
	if os.Getenv("WARMROUTE_BENCH_10M") != "" {
		sizes = append(sizes, 10_000_000)
	}
	for _, blocks := range sizes {
		for _, n := range []int{8, 64, 512} {
			b.Run(fmt.Sprintf("blocks=%dM/endpoints=%d", blocks/1_000_000, n), func(b *testing.B) {
				benchDecision(b, n, blocks)
			})
		}
	}
}

func benchDecision(b *testing.B, n, blocks int) {
	eps := benchEndpoints(n)
	ix := benchIndex(b, eps, blocks)
	s := New(NewPools([]PoolConfig{{Name: "m", Endpoints: eps}}, ""), &Load{}, Options{
		Index: ix, Tokens: map[string]Tokens{"m": idTokens{}}, Fallbacks: 2,
	})
	prompts := benchPrompts(blocks)
	ctx := context.Background()
	lat := make([]time.Duration, 0, 1<<16)
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		start := time.Now()
		d, err := s.Pick(ctx, &Request{Kind: KindCompletion, Model: "m", PromptTokenIDs: [][]int{prompts[i%len(prompts)]}})
		if err != nil {
			b.Fatal(err)
		}
		d.Commit()
		d.Release()
		lat = append(lat, time.Since(start))
		i++
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
}

func benchEndpoints(n int) []string {
	eps := make([]string, n)
	for i := range eps {
		eps[i] = fmt.Sprintf("10.0.%d.%d:8000", i/250, i%250+1)
	}
	return eps
}
