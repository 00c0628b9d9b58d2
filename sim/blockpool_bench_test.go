package sim

import "testing"

// BenchmarkCacheLookup measures a full prefix hit: hashing the prompt's
// blocks, matching them and releasing them, at several prompt lengths.
func BenchmarkCacheLookup(b *testing.B) {
	for _, n := range []int{256, 4096, 32768} {
		b.Run(sizeName(n)+"tokens", func(b *testing.B) {
			c := testCache(b, 16, n/16+16)
			prompt := seqTokens(1, n+1)
			c.release(run(c, prompt, blockExtra{}))
			b.SetBytes(int64(4 * n))
			b.ReportAllocs()
			for b.Loop() {
				sb := c.begin(prompt, blockExtra{})
				if sb.cached != n {
					b.Fatalf("cached %d, want %d", sb.cached, n)
				}
				c.release(sb)
			}
		})
	}
}

// BenchmarkCacheInsert measures storing a prompt that always misses in a
// full pool, so every block also evicts one (the steady state of a busy
// engine), at several prompt lengths.
func BenchmarkCacheInsert(b *testing.B) {
	for _, n := range []int{256, 4096, 32768} {
		b.Run(sizeName(n)+"tokens", func(b *testing.B) {
			c := testCache(b, 16, n/16)
			prompt := seqTokens(1, n)
			b.SetBytes(int64(4 * n))
			b.ReportAllocs()
			for b.Loop() {
				prompt[0]++ // a new chain every time
				sb := run(c, prompt, blockExtra{})
				c.release(sb)
			}
		})
	}
}

// BenchmarkEncodeBatch measures rendering one BlockStored batch.
func BenchmarkEncodeBatch(b *testing.B) {
	for _, blocks := range []int{1, 64, 2048} {
		b.Run(sizeName(blocks)+"blocks", func(b *testing.B) {
			ev := kvEvent{kind: blockStored, blockSize: 16, tokens: seqTokens(1000, 16*blocks)}
			for i := range blocks {
				ev.hashes = append(ev.hashes, uint64(i)*0x9e3779b97f4a7c15)
			}
			evs := []kvEvent{ev}
			var buf []byte
			b.ReportAllocs()
			for b.Loop() {
				buf = encodeBatch(buf[:0], 1, evs, 0, FormatMap)
			}
			b.SetBytes(int64(len(buf)))
		})
	}
}
