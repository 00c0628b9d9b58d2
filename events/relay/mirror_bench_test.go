package relay

import (
	"runtime"
	"testing"

	"github.com/warmroute/warmroute/events/wire"
)

// fillMirror stores n 16-token blocks in chains of 64, as an engine's
// prefix cache holds them.
func fillMirror(mr *mirror, n int) {
	const chain, bs = 64, 16
	toks := make([]uint32, chain*bs)
	hashes := make([]uint64, chain)
	seq := uint64(0)
	for start := 0; start < n; start += chain {
		k := min(chain, n-start)
		for i := range k {
			hashes[i] = uint64(start+i)*0x9e3779b97f4a7c15 | 1
		}
		for i := range toks {
			toks[i] = uint32(start*bs + i)
		}
		ev := wire.Event{Kind: wire.KindBlockStored, BlockHashes: hashes[:k], TokenIDs: toks[:k*bs], BlockSize: bs}
		mr.apply(seq, &wire.Batch{Events: []wire.Event{ev}})
		seq++
	}
}

// BenchmarkMirrorBytesPerBlock reports the heap one mirrored 16-token block
// costs (map entry, slab tokens, amortised growth), at 1M blocks: the
// figure in the README.
func BenchmarkMirrorBytesPerBlock(b *testing.B) {
	const n = 1_000_000
	var perBlock float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		mr := newMirror(n, mustMetrics(b))
		fillMirror(mr, n)
		runtime.GC()
		runtime.ReadMemStats(&after)
		perBlock = float64(after.HeapAlloc-before.HeapAlloc) / n
		runtime.KeepAlive(mr)
	}
	b.ReportMetric(perBlock, "bytes/block")
}

// BenchmarkMirrorApply is the relay's added cost per forwarded block.
func BenchmarkMirrorApply(b *testing.B) {
	mr := newMirror(1<<30, mustMetrics(b))
	b.ResetTimer()
	fillMirror(mr, b.N)
}

// BenchmarkMirrorSnapshot encodes a 1M-block mirror into 1 MiB chunks (the
// mirror's lock is held that long).
func BenchmarkMirrorSnapshot(b *testing.B) {
	mr := newMirror(1_000_000, mustMetrics(b))
	fillMirror(mr, 1_000_000)
	for b.Loop() {
		chunks, n := mr.snapshot(1 << 20)
		if n != 1_000_000 || len(chunks) == 0 {
			b.Fatalf("%d blocks in %d chunks", n, len(chunks))
		}
	}
}
