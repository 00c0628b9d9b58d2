package index

import (
	"github.com/warmroute/warmroute/internal/benchcpu"

	"encoding/binary"
	"fmt"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/zeebo/xxh3"
)

// benchTokens returns n deterministic token ids below a 150k vocabulary.
func benchTokens(n int) []uint32 {
	t := make([]uint32, n)
	x := uint32(2463534242)
	for i := range t {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		t[i] = x % 150000
	}
	return t
}

// BenchmarkAppendKeys measures keying a prompt (the reference size is
// 10k tokens) with the block sizes vLLM uses on CUDA (16) and for MLA (64).
func BenchmarkAppendKeys(b *testing.B) {
	id := Identity{Model: "meta-llama/Llama-3.1-8B-Instruct", CacheSalt: "tenant-a"}
	for _, n := range []int{1_000, 10_000, 100_000} {
		for _, bs := range []int{16, 64} {
			toks := benchTokens(n)
			keys := make([]Key, 0, n/bs)
			b.Run(fmt.Sprintf("tokens=%d/block=%d", n, bs), func(b *testing.B) {
				b.ReportAllocs()
				cpu := benchcpu.Start()
				for b.Loop() {
					keys, _ = AppendKeys(keys[:0], id, bs, toks)
				}
				cpu.Report(b)
			})
			// fresh: a new result slice each time, as a decision keys its
			// prompt (and as llm-d's keying returns a new slice).
			b.Run(fmt.Sprintf("tokens=%d/block=%d/fresh", n, bs), func(b *testing.B) {
				b.ReportAllocs()
				cpu := benchcpu.Start()
				for b.Loop() {
					keys, _ = AppendKeys(nil, id, bs, toks)
				}
				cpu.Report(b)
			})
		}
	}
}

// BenchmarkAppendKeysInt is BenchmarkAppendKeys for []int token ids, the type
// the request parser produces, allocating the result each time.
func BenchmarkAppendKeysInt(b *testing.B) {
	id := Identity{Model: "m"}
	src := benchTokens(10_000)
	toks := make([]int, len(src))
	for i, t := range src {
		toks[i] = int(t)
	}
	b.ReportAllocs()
	for b.Loop() {
		_, _ = AppendKeys(nil, id, 16, toks)
	}
}

// BenchmarkHashChoice compares the two candidate hashes on one chained block
// (8-byte parent plus block tokens); the faster one is used by chain.
func BenchmarkHashChoice(b *testing.B) {
	for _, bs := range []int{16, 64} {
		buf := make([]byte, 8+4*bs)
		for i, t := range benchTokens(bs) {
			binary.LittleEndian.PutUint32(buf[8+4*i:], t)
		}
		b.Run(fmt.Sprintf("xxh3/block=%d", bs), func(b *testing.B) {
			var h uint64
			for b.Loop() {
				binary.LittleEndian.PutUint64(buf, h)
				h = xxh3.Hash(buf)
			}
		})
		b.Run(fmt.Sprintf("xxhash64/block=%d", bs), func(b *testing.B) {
			var h uint64
			for b.Loop() {
				binary.LittleEndian.PutUint64(buf, h)
				h = xxhash.Sum64(buf)
			}
		})
	}
}
