// Package llmdbench runs llm-d-kv-cache's kvblock package on the work of
// warmroute's index benchmarks (same data shape, keying included where
// warmroute's includes it), reporting CPU time per op like internal/benchcpu.
package llmdbench

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/llm-d/llm-d-kv-cache/pkg/kvcache/kvblock"
)

func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// tokens mirrors warmroute's index benchmarks (benchEvent/reseed): n ids.
func tokens(n, seed int) []uint32 {
	t := make([]uint32, n)
	for i := range t {
		t[i] = uint32(i)*2654435761 ^ uint32(seed)<<18
	}
	return t
}

func processor(b *testing.B) kvblock.TokenProcessor {
	tp, err := kvblock.NewChunkedTokenDatabase(&kvblock.TokenProcessorConfig{BlockSizeTokens: 16})
	if err != nil {
		b.Fatal(err)
	}
	return tp
}

// BenchmarkKeying: keys of a 10k-token prompt, block 16 (a new slice per
// call, as llm-d returns).
func BenchmarkKeying(b *testing.B) {
	tp := processor(b)
	toks := tokens(10_000, 1)
	b.ReportAllocs()
	start := cpuNow()
	for b.Loop() {
		if _, err := tp.TokensToKVBlockKeys(kvblock.EmptyBlockHash, toks, "meta-llama/Llama-3.1-8B-Instruct", nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuNow()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// BenchmarkAddGrowing: one BlockStored of n new blocks per op into an index
// that keeps them all, keying included (engine keys mapped 1:1), the work of
// warmroute's BenchmarkStoreGrowing.
func BenchmarkAddGrowing(b *testing.B) {
	for _, n := range []int{10_000} {
		b.Run(fmt.Sprintf("blocks=%d", n), func(b *testing.B) {
			ix, err := kvblock.NewInMemoryIndex(kvblock.DefaultInMemoryIndexConfig())
			if err != nil {
				b.Fatal(err)
			}
			tp := processor(b)
			ctx := context.Background()
			entries := []kvblock.PodEntry{{PodIdentifier: "10.0.0.1:8000", DeviceTier: "gpu"}}
			engine := make([]kvblock.BlockHash, n)
			var cpu time.Duration
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				toks := tokens(n*16, i+2)
				for j := range engine {
					engine[j] = kvblock.BlockHash(uint64(i+2)<<32 | uint64(j))
				}
				b.StartTimer()
				start := cpuNow()
				keys, err := tp.TokensToKVBlockKeys(kvblock.EmptyBlockHash, toks, "m", nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := ix.Add(ctx, engine, keys, entries); err != nil {
					b.Fatal(err)
				}
				cpu += cpuNow() - start
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkLookupAllHold: Lookup of 10k keys with 8 candidate pods all
// holding every key, the work of warmroute's BenchmarkLookupAllHold.
func BenchmarkLookupAllHold(b *testing.B) {
	const n, pods = 10_000, 8
	ix, err := kvblock.NewInMemoryIndex(kvblock.DefaultInMemoryIndexConfig())
	if err != nil {
		b.Fatal(err)
	}
	tp := processor(b)
	ctx := context.Background()
	keys, err := tp.TokensToKVBlockKeys(kvblock.EmptyBlockHash, tokens(n*16, 1_000_000), "m", nil)
	if err != nil {
		b.Fatal(err)
	}
	set := sets.New[string]()
	for p := range pods {
		name := fmt.Sprintf("10.0.0.%d:8000", p)
		set.Insert(name)
		engine := make([]kvblock.BlockHash, n)
		for j := range engine {
			engine[j] = kvblock.BlockHash(uint64(p+1)<<40 | uint64(j))
		}
		if err := ix.Add(ctx, engine, keys, []kvblock.PodEntry{{PodIdentifier: name, DeviceTier: "gpu"}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	start := cpuNow()
	var got map[kvblock.BlockHash][]kvblock.PodEntry
	for b.Loop() {
		if got, err = ix.Lookup(ctx, keys, set); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuNow()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
	if len(got) != n || len(got[keys[n-1]]) != pods {
		b.Fatalf("lookup found %d keys, last held by %d pods; want %d and %d", len(got), len(got[keys[n-1]]), n, pods)
	}
}
