package memlat

import (
	"fmt"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/warmroute/warmroute/internal/benchcpu"
)

// mappedCycle is cycle's working set in memory mapped for it alone, advised
// to use transparent huge pages (2 MiB) when huge is set, before any page
// of it is touched. The Go heap asks for no huge pages, so on a host whose
// transparent_hugepage setting is "madvise" (a common default) only memory
// advised this way gets them; the benchmark shows what the TLB's reach
// costs a random load.
func mappedCycle(b *testing.B, n int, seed uint64, huge bool) []uint64 {
	mem, err := unix.Mmap(-1, 0, n*64, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = unix.Munmap(mem) })
	if huge {
		if err := unix.Madvise(mem, unix.MADV_HUGEPAGE); err != nil {
			b.Skipf("madvise(MADV_HUGEPAGE): %v", err)
		}
	}
	words := unsafe.Slice((*uint64)(unsafe.Pointer(&mem[0])), n*lineWords)
	copy(words, cycle(n, seed))
	return words
}

// BenchmarkChaseHugePages is BenchmarkChase over 256 MiB and 2 GiB working
// sets mapped with and without huge pages.
//
//	GOMAXPROCS=1 go test ./internal/memlat -run '^$' -bench ChaseHugePages -benchtime=10000000x -count=3
func BenchmarkChaseHugePages(b *testing.B) {
	for _, mb := range []int{256, 2048} {
		for _, huge := range []bool{false, true} {
			b.Run(fmt.Sprintf("set=%dMiB/huge=%v", mb, huge), func(b *testing.B) {
				mem := mappedCycle(b, mb<<20/64, uint64(mb), huge)
				for _, ways := range []int{1, 8} {
					b.Run(fmt.Sprintf("ways=%d", ways), func(b *testing.B) {
						sink ^= chase(mem, ways, 1<<16/ways)
						b.ResetTimer()
						m := benchcpu.Start()
						sink ^= chase(mem, ways, b.N/ways)
						m.Report(b)
					})
				}
			})
		}
	}
}
