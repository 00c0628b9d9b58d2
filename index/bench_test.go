package index

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/warmroute/warmroute/internal/benchcpu"
	"github.com/warmroute/warmroute/internal/testclock"
)

// benchEvent returns a BlockStored for n blocks of 16 tokens.
func benchEvent(ep string, seed, n int) Stored {
	toks := benchTokens(16 * n)
	for i := range toks {
		toks[i] ^= uint32(seed) << 18
	}
	hs := make([]uint64, n)
	for i := range hs {
		hs[i] = uint64(seed)<<32 | uint64(i)
	}
	return Stored{Endpoint: ep, Hashes: hs, Tokens: toks, BlockSize: 16, Identity: Identity{Model: "m"}}
}

func benchIndex(b *testing.B) *Index {
	b.Helper()
	ix, err := New(Options{BlockSize: 16})
	if err != nil {
		b.Fatal(err)
	}
	return ix
}

// BenchmarkStore measures applying a BlockStored of n blocks, keying included
// (llm-d's reference: Add of 10k keys, 6.09 ms). Each iteration stores then
// removes, so the index stays the same size.
func BenchmarkStore(b *testing.B) {
	for _, n := range []int{100, 1_000, 10_000} {
		b.Run(fmt.Sprintf("blocks=%d", n), func(b *testing.B) {
			ix := benchIndex(b)
			ev := benchEvent("10.0.0.1:8000", 1, n)
			b.ReportAllocs()
			cpu := benchcpu.Start()
			for b.Loop() {
				if _, err := ix.Store(ev); err != nil {
					b.Fatal(err)
				}
				ix.Remove(ev.Endpoint, 0, ev.Hashes, MediumGPU)
			}
			cpu.Report(b)
		})
	}
}

// BenchmarkLookup measures the leading-run lookup of n keys that one of e
// candidates holds in full (llm-d's reference: Lookup of 10k keys, ~6.5 ms).
func BenchmarkLookup(b *testing.B) {
	for _, n := range []int{100, 1_000, 10_000} {
		for _, e := range []int{8, 64, 512} {
			b.Run(fmt.Sprintf("keys=%d/endpoints=%d", n, e), func(b *testing.B) {
				ix := benchIndex(b)
				eps := make([]string, e)
				for i := range eps {
					eps[i] = fmt.Sprintf("10.0.%d.%d:8000", i/256, i%256)
					ix.Store(benchEvent(eps[i], i, 2)) // every endpoint holds something
				}
				ev := benchEvent(eps[e/2], 1_000_000, n)
				ix.Store(ev)
				keys, _ := AppendKeys(nil, ev.Identity, 16, ev.Tokens)
				dst := make([]Match, e)
				b.ReportAllocs()
				cpu := benchcpu.Start()
				for b.Loop() {
					dst = ix.Lookup(keys, eps, dst)
				}
				cpu.Report(b)
				if dst[e/2].Confirmed != n {
					b.Fatalf("matched %+v, want %d", dst[e/2], n)
				}
			})
		}
	}
}

// BenchmarkLookupAllHold is BenchmarkLookup with every candidate holding
// all n keys, the work llm-d's Lookup benchmark does (8 pods holding the
// keys): every candidate's run is walked to the end.
func BenchmarkLookupAllHold(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		for _, e := range []int{8, 64} {
			b.Run(fmt.Sprintf("keys=%d/endpoints=%d", n, e), func(b *testing.B) {
				ix := benchIndex(b)
				eps := make([]string, e)
				ev := benchEvent("", 1_000_000, n)
				for i := range eps {
					eps[i] = fmt.Sprintf("10.0.%d.%d:8000", i/256, i%256)
					ev.Endpoint = eps[i]
					if _, err := ix.Store(ev); err != nil {
						b.Fatal(err)
					}
				}
				keys, _ := AppendKeys(nil, ev.Identity, 16, ev.Tokens)
				dst := make([]Match, e)
				b.ReportAllocs()
				cpu := benchcpu.Start()
				for b.Loop() {
					dst = ix.Lookup(keys, eps, dst)
				}
				cpu.Report(b)
				for i := range dst {
					if dst[i].Confirmed != n {
						b.Fatalf("endpoint %d matched %+v, want %d", i, dst[i], n)
					}
				}
			})
		}
	}
}

// BenchmarkStoreGrowing stores a new BlockStored of n blocks per op into an
// index that keeps them all, the work llm-d's Add benchmark does. Building
// each op's event is outside the timer and the CPU meter.
func BenchmarkStoreGrowing(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("blocks=%d", n), func(b *testing.B) {
			ix := benchIndex(b)
			ev := benchEvent("10.0.0.1:8000", 1, n)
			var cpu time.Duration
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				reseed(&ev, i+2)
				b.StartTimer()
				start := benchcpu.Now()
				if _, err := ix.Store(ev); err != nil {
					b.Fatal(err)
				}
				cpu += benchcpu.Now() - start
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(ix.Stats().Entries), "entries")
		})
	}
}

// reseed rewrites ev in place into another event of the same size whose
// blocks no earlier seed produced.
func reseed(ev *Stored, seed int) {
	for i := range ev.Tokens {
		ev.Tokens[i] = uint32(i)*2654435761 ^ uint32(seed)<<18
	}
	for i := range ev.Hashes {
		ev.Hashes[i] = uint64(seed)<<32 | uint64(i)
	}
}

// BenchmarkSpeculate measures predicting n blocks for one endpoint.
func BenchmarkSpeculate(b *testing.B) {
	for _, n := range []int{100, 1_000, 10_000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			clock := testclock.New(testStart)
			ix, _ := New(Options{BlockSize: 16, Now: clock.Now})
			ev := benchEvent("", 3, n)
			keys, _ := AppendKeys(nil, ev.Identity, 16, ev.Tokens)
			b.ReportAllocs()
			cpu := benchcpu.Start()
			for i := 0; b.Loop(); i++ {
				ix.Speculate("10.0.0.9:8000", keys, DecisionID(i), time.Second)
				clock.Advance(2 * time.Second) // the next round expires this one
			}
			cpu.Report(b)
		})
	}
}

// BenchmarkBytesPerEntry measures heap bytes per (block, endpoint) entry with
// runtime.MemStats, at 1M entries by default; set WARMROUTE_BENCH_ENTRIES (for
// example to 10000000, which needs about 1 GiB) for the 10M figure.
// Each key is held by `holders` endpoints.
func BenchmarkBytesPerEntry(b *testing.B) {
	total := 1_000_000
	if s := os.Getenv("WARMROUTE_BENCH_ENTRIES"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			total = n
		}
	}
	for _, holders := range []int{1, 4} {
		b.Run(fmt.Sprintf("entries=%d/holders=%d", total, holders), func(b *testing.B) {
			for b.Loop() {
				perEntry, est := measureBytes(b, total, holders)
				b.ReportMetric(perEntry, "B/entry")
				b.ReportMetric(est, "est-B/entry")
			}
		})
	}
}

func measureBytes(b *testing.B, total, holders int) (perEntry, estimated float64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ix, err := New(Options{BlockSize: 16, MaxBytes: 1 << 40})
	if err != nil {
		b.Fatal(err)
	}
	const chain = 1000 // blocks per stored sequence
	for h := range holders {
		ep := fmt.Sprintf("10.1.0.%d:8000", h)
		for s := 0; s*chain*holders < total; s++ {
			ix.Store(benchEvent(ep, s, chain))
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	st := ix.Stats()
	runtime.KeepAlive(ix)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(st.Entries), float64(st.Bytes) / float64(st.Entries)
}
