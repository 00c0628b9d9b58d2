package index

import (
	"fmt"
	"testing"
)

// TestHolderCacheFindsTheRightHolder fills the holder cache past its size
// (so slots collide and are overwritten) and checks that every lookup, cached
// or not, returns the holder of that endpoint and rank, and that an endpoint
// never seen is not found through a colliding slot.
func TestHolderCacheFindsTheRightHolder(t *testing.T) {
	ix, err := New(Options{BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	name := func(i int) string { return fmt.Sprintf("10.1.%d.%d:8000", i/250, i%250) }
	const endpoints, ranks = 300, 3
	for round := range 2 { // the second round finds most in the cache
		for i := range endpoints {
			for r := range ranks {
				hd, err := ix.holderFor(name(i), r, round == 0)
				if err != nil || hd == nil {
					t.Fatalf("holder of %s rank %d: %v, %v", name(i), r, hd, err)
				}
				ep, ok := ix.eps.lookup(name(i))
				if want := ix.holders.get(makeHolder(ep, r)); !ok || hd != want || hd.name != name(i) {
					t.Fatalf("holder of %s rank %d = %p (%s, %x), want %p", name(i), r, hd, hd.name, hd.id, want)
				}
			}
		}
	}
	for i := endpoints; i < endpoints+100; i++ {
		if hd, err := ix.holderFor(name(i), 0, false); err != nil || hd != nil {
			t.Fatalf("unknown endpoint %s: holder %p, %v", name(i), hd, err)
		}
	}
	if hd, err := ix.holderFor(name(0), ranks, false); err != nil || hd != nil {
		t.Fatalf("unknown rank: holder %p, %v", hd, err)
	}
}

// TestHolderCacheTellsRanksApart looks up two ranks of one endpoint that
// share a cache slot, each right after the other was cached.
func TestHolderCacheTellsRanksApart(t *testing.T) {
	ix, err := New(Options{BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	const ep = "10.2.0.1:8000"
	r2 := 1
	for cacheSlot(ep, r2) != cacheSlot(ep, 0) {
		r2++
	}
	a, err := ix.holderFor(ep, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ix.holderFor(ep, r2, true)
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Fatalf("ranks 0 and %d share a holder", r2)
	}
	for _, want := range []*holder{a, b, a, b} {
		rank := int(uint32(want.id) & 0xff)
		if got, _ := ix.holderFor(ep, rank, false); got != want {
			t.Fatalf("holder of rank %d = %p, want %p", rank, got, want)
		}
	}
}
