package grpcbuf

import (
	"fmt"
	"testing"

	"google.golang.org/grpc/mem"
)

func TestTierFor(t *testing.T) {
	for _, tc := range []struct{ n, tier int }{
		{0, 0}, {1, 0}, {256, 0}, {257, 1}, {512, 1}, {513, 2},
		{40 << 10, 8}, {64 << 10, 8}, {1 << 20, 12}, {4 << 20, tiers - 1}, {4<<20 + 1, -1},
	} {
		if got := tierFor(tc.n); got != tc.tier {
			t.Errorf("tierFor(%d) = %d, want %d", tc.n, got, tc.tier)
		}
	}
}

// Get returns the asked length with its tier's capacity (the asked length
// itself past the largest tier).
func TestGetLengthAndCapacity(t *testing.T) {
	p := New()
	for _, n := range []int{0, 1, 255, 256, 1000, 16 << 10, 40 << 10, 1 << 20, 4 << 20, 5 << 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			b := p.Get(n)
			if len(*b) != n {
				t.Fatalf("Get(%d): length %d", n, len(*b))
			}
			want := n
			if tr := tierFor(n); tr >= 0 {
				want = 1 << (tr + minShift)
			}
			if cap(*b) != want {
				t.Fatalf("Get(%d): capacity %d, want %d", n, cap(*b), want)
			}
		})
	}
}

// A buffer whose capacity is a tier's size is reused by the next Get of that
// tier, with the new length; others are never pooled.
func TestPutReuses(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	p := New()
	b := p.Get(40 << 10)
	(*b)[0] = 7
	*b = (*b)[:10] // a prefix, as gRPC returns it
	p.Put(b)
	c := p.Get(33 << 10)
	if &(*c)[0] != &(*b)[0] || len(*c) != 33<<10 || (*c)[0] != 7 {
		t.Fatalf("Get after Put: a new buffer (length %d), want the pooled one, uncleared", len(*c))
	}
	for _, foreign := range [][]byte{make([]byte, 100), make([]byte, 3000), make([]byte, 8<<20)} {
		p.Put(&foreign)
	}
	for _, n := range []int{100, 3000} {
		if g := p.Get(n); cap(*g) != 1<<(tierFor(n)+minShift) {
			t.Fatalf("Get(%d) after foreign Puts: capacity %d, want the tier's", n, cap(*g))
		}
	}
}

// BenchmarkGetPut gathers messages of the sizes ext_proc delivers a long
// prompt's body in (the codec's copy into one buffer per message), with
// this pool and with gRPC's default, interleaved in one run.
func BenchmarkGetPut(b *testing.B) {
	for _, n := range []int{4 << 10, 40 << 10, 400 << 10} {
		for _, pc := range []struct {
			name string
			pool mem.BufferPool
		}{{"grpcbuf", New()}, {"grpc-default", mem.DefaultBufferPool()}} {
			b.Run(fmt.Sprintf("bytes=%d/pool=%s", n, pc.name), func(b *testing.B) {
				src := make([]byte, n)
				b.SetBytes(int64(n))
				b.ReportAllocs()
				for b.Loop() {
					buf := pc.pool.Get(n)
					copy(*buf, src)
					pc.pool.Put(buf)
				}
			})
		}
	}
}

// Install makes the pool gRPC's default, once: a second call keeps it.
func TestInstall(t *testing.T) {
	Install()
	first, ok := mem.DefaultBufferPool().(*Pool)
	if !ok {
		t.Fatalf("after Install the default pool is %T, want *grpcbuf.Pool", mem.DefaultBufferPool())
	}
	Install()
	if mem.DefaultBufferPool() != mem.BufferPool(first) {
		t.Fatal("a second Install replaced the pool")
	}
}
