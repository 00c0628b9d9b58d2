package prefetch

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/warmroute/warmroute/internal/benchcpu"
)

// TestLineLeavesMemoryAlone checks that Line changes no memory: every word of a buffer prefetched line by line,
// at every alignment, keeps its value.
func TestLineLeavesMemoryAlone(t *testing.T) {
	buf := make([]uint64, 1024)
	for i := range buf {
		buf[i] = uint64(i) * 0x9e3779b97f4a7c15
	}
	bytes := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), 8*len(buf))
	for i := range bytes {
		Line(unsafe.Pointer(&bytes[i]))
	}
	for i, w := range buf {
		if want := uint64(i) * 0x9e3779b97f4a7c15; w != want {
			t.Fatalf("word %d is %#x after prefetching, want %#x", i, w, want)
		}
	}
}

// slot is the index of the first word of key k's line, in a working set
// whose line count is mask+1 (a power of two): a few rounds of multiply-xorshift, as a hash table derives a slot
// from a key, so that the loop computing the addresses is as long as the
// index's (tens of instructions a key, not two).
func slot(k uint64, mask uint64) uint64 {
	for range 4 {
		k ^= k >> 29
		k *= 0xbf58476d1ce4e5b9
	}
	return (k & mask) * 8
}

// probe is one batch of BenchmarkBatch: for each key, a probe that loads
// its line and branches on the word it finds (as a hash table's probe loop
// exits on what it finds; the CPU mispredicts it half the time), then does
// a dependent chain of work with it (as an update of the slot would).
func probe(mem []uint64, keys []uint64, mask uint64) (sum uint64) {
	for _, k := range keys {
		w := mem[slot(k, mask)]
		if w&1 == 0 {
			w = w*0x94d049bb133111eb + k
		} else {
			w ^= w >> 31
		}
		for range 8 {
			w = w*0x9e3779b97f4a7c15 ^ w>>17
		}
		sum += w
	}
	return sum
}

// BenchmarkBatch probes batches of 32 random cache lines of a working set
// (1 MiB, cached; 64 MiB and 1 GiB, beyond any last-level cache) three ways:
// probing directly (how=none), after reading every line first with plain
// loads (how=load, what the index did before this package), and after
// prefetching every line with Line (how=prefetch). Computing a line's
// address and working on it take tens of instructions each, as in the
// index, so the reorder window holds only a few probes or loads at a time.
// cpu-ns/line is process CPU time per line.
//
//	GOMAXPROCS=1 go test ./internal/prefetch -run '^$' -bench Batch -benchtime=1000000x -count=3
func BenchmarkBatch(b *testing.B) {
	const batch = 32
	for _, mb := range []int{1, 64, 1024} {
		mem := make([]uint64, mb<<20/8)
		mask := uint64(len(mem)/8 - 1)
		r := rand.New(rand.NewPCG(uint64(mb), 7))
		for i := range mem {
			mem[i] = r.Uint64()
		}
		// A new set of keys for every batch of a cycle of 4,096 batches,
		// so no batch finds the previous one's lines.
		keys := make([]uint64, 4096*batch)
		for i := range keys {
			keys[i] = r.Uint64()
		}
		for _, how := range []string{"none", "load", "prefetch"} {
			b.Run(fmt.Sprintf("set=%dMiB/how=%s", mb, how), func(b *testing.B) {
				var sink uint64
				cpu := benchcpu.Start()
				for i := 0; b.Loop(); i++ {
					ks := keys[(i%4096)*batch:][:batch]
					switch how {
					case "load":
						for _, k := range ks {
							sink += mem[slot(k, mask)]
						}
					case "prefetch":
						for _, k := range ks {
							Line(unsafe.Pointer(&mem[slot(k, mask)]))
						}
					}
					sink += probe(mem, ks, mask)
				}
				runtime.KeepAlive(sink)
				b.ReportMetric(float64(cpu.Elapsed().Nanoseconds())/float64(b.N*batch), "cpu-ns/line")
			})
		}
	}
}

func TestOtherLine(t *testing.T) {
	var buf [4 * LineSize]byte
	base := unsafe.Pointer(&buf[0])
	at := func(off uintptr) unsafe.Pointer { return unsafe.Add(base, off) }
	start := (LineSize - uintptr(base)%LineSize) % LineSize // the first line boundary in buf
	tests := []struct {
		a, b uintptr
		want bool
	}{
		{start, start, false},
		{start, start + LineSize - 1, false},
		{start + LineSize - 1, start + LineSize, true},
		{start + 16, start + 32, false},
		{start + 48, start + 64, true},
		{start + LineSize, start, true},
	}
	for _, tt := range tests {
		if got := OtherLine(at(tt.a), at(tt.b)); got != tt.want {
			t.Errorf("OtherLine(+%d, +%d) = %v, want %v", tt.a-start, tt.b-start, got, tt.want)
		}
	}
}
