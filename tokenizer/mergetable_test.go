package tokenizer

import (
	"math/rand/v2"
	"testing"
)

func TestMergeTableMatchesMap(t *testing.T) {
	cases := []struct {
		name  string
		pairs int
		ids   uint32 // ids drawn from [0, ids): small ranges repeat pairs
	}{
		{"empty", 0, 10},
		{"one", 1, 10},
		{"repeated pairs", 500, 8},
		{"vocabulary sized", 150_000, 150_000},
		{"top of the id range", 1000, noToken},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tc.pairs)))
			want := map[uint64]uint64{}
			tab := newMergeTable(tc.pairs)
			for rank := range tc.pairs {
				k := pairKey(rng.Uint32N(tc.ids), rng.Uint32N(tc.ids))
				v := uint64(rank)<<32 | uint64(rng.Uint32())
				want[k] = v
				tab.put(k, v)
			}
			if tab.n != len(want) {
				t.Fatalf("table holds %d pairs, want %d", tab.n, len(want))
			}
			for k, v := range want {
				if got := tab.get(k); got != v {
					t.Fatalf("get(%#x) = %#x, want %#x", k, got, v)
				}
			}
			for range 1000 {
				k := pairKey(rng.Uint32N(tc.ids), rng.Uint32N(tc.ids))
				if v, ok := want[k]; !ok && tab.get(k) != noMerge {
					t.Fatalf("get(%#x) found %#x for an absent pair", k, tab.get(k))
				} else if ok && tab.get(k) != v {
					t.Fatalf("get(%#x) = %#x, want %#x", k, tab.get(k), v)
				}
			}
		})
	}
	var zero mergeTable
	if zero.get(pairKey(1, 2)) != noMerge {
		t.Fatal("zero table found a pair")
	}
}
