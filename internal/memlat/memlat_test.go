package memlat

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/warmroute/warmroute/internal/benchcpu"
)

// lineWords is one 64-byte cache line of uint64s: each element of a chain
// sits on its own line, so every step is one cache line.
const lineWords = 8

// cycle returns a working set of n cache lines whose first words form one
// random cycle through every line (Sattolo's algorithm), so a chase visits
// each line once per lap in an order no prefetcher can guess.
func cycle(n int, seed uint64) []uint64 {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := r.IntN(i)
		perm[i], perm[j] = perm[j], perm[i]
	}
	mem := make([]uint64, n*lineWords)
	for i := range n {
		mem[i*lineWords] = uint64(perm[i] * lineWords)
	}
	return mem
}

var sink uint64

// chase follows `ways` independent chains through mem for steps steps each
// and returns a value depending on every load.
func chase(mem []uint64, ways, steps int) uint64 {
	var p [16]uint64
	n := uint64(len(mem) / lineWords)
	for w := range ways {
		p[w] = (uint64(w) * (n / uint64(ways))) * lineWords
	}
	switch ways {
	case 1:
		a := p[0]
		for range steps {
			a = mem[a]
		}
		return a
	case 4:
		a, b, c, d := p[0], p[1], p[2], p[3]
		for range steps {
			a, b, c, d = mem[a], mem[b], mem[c], mem[d]
		}
		return a ^ b ^ c ^ d
	case 8:
		a, b, c, d, e, f, g, h := p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]
		for range steps {
			a, b, c, d, e, f, g, h = mem[a], mem[b], mem[c], mem[d], mem[e], mem[f], mem[g], mem[h]
		}
		return a ^ b ^ c ^ d ^ e ^ f ^ g ^ h
	}
	panic(fmt.Sprintf("memlat: %d ways not supported", ways))
}

// BenchmarkChase reports ns and cpu-ns per cache line loaded. With ways=1
// that is the latency of one load at that working-set size; with more
// ways it is the cost per line when that many misses can be in flight.
// One op is one line loaded (b.N lines in all, spread over the ways).
//
//	GOMAXPROCS=1 go test ./internal/memlat -run '^$' -bench Chase -benchtime=20000000x -count=3
func BenchmarkChase(b *testing.B) {
	for _, mb := range []int{1, 16, 256, 2048} {
		mem := cycle(mb<<20/64, uint64(mb))
		for _, ways := range []int{1, 4, 8} {
			b.Run(fmt.Sprintf("set=%dMiB/ways=%d", mb, ways), func(b *testing.B) {
				sink ^= chase(mem, ways, 1<<16/ways) // warm the TLB and caches a little
				b.ResetTimer()
				m := benchcpu.Start()
				sink ^= chase(mem, ways, b.N/ways)
				m.Report(b)
			})
		}
	}
}

// TestCycleVisitsEveryLine: the chase is one cycle through every line, so
// no chain falls into a short loop that stays in cache.
func TestCycleVisitsEveryLine(t *testing.T) {
	for _, n := range []int{2, 3, 64, 1000} {
		mem := cycle(n, 7)
		seen := make([]bool, n)
		a := uint64(0)
		for range n {
			i := a / lineWords
			if seen[i] {
				t.Fatalf("n=%d: line %d visited twice within one lap", n, i)
			}
			seen[i] = true
			a = mem[a]
		}
		if a != 0 {
			t.Fatalf("n=%d: the chase did not return to line 0 after %d steps", n, n)
		}
	}
}
