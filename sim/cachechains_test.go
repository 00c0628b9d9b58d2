package sim

import (
	"slices"
	"testing"
)

func TestLeafChains(t *testing.T) {
	p := func(h uint64) *uint64 { return &h }
	tests := []struct {
		name     string
		blocks   []CacheBlock
		chains   [][]uint32
		orphans  int
		distinct int
	}{
		{name: "empty"},
		{name: "one chain", distinct: 2, chains: [][]uint32{{1, 2, 3, 4}},
			blocks: []CacheBlock{{Hash: 1, TokenIDs: []int{1, 2}}, {Hash: 2, ParentHash: p(1), TokenIDs: []int{3, 4}}}},
		{name: "fork and duplicate", distinct: 3, chains: [][]uint32{{1, 2, 3, 4}, {1, 2, 5, 6}},
			blocks: []CacheBlock{{Hash: 1, TokenIDs: []int{1, 2}}, {Hash: 2, ParentHash: p(1), TokenIDs: []int{3, 4}},
				{Hash: 3, ParentHash: p(1), TokenIDs: []int{5, 6}}, {Hash: 3, ParentHash: p(1), TokenIDs: []int{5, 6}}}},
		{name: "evicted parent", distinct: 1, orphans: 1,
			blocks: []CacheBlock{{Hash: 2, ParentHash: p(1), TokenIDs: []int{3, 4}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := CacheState{Blocks: tt.blocks}
			chains, orphans := c.LeafChains()
			slices.SortFunc(chains, slices.Compare)
			if !slices.EqualFunc(chains, tt.chains, slices.Equal) || orphans != tt.orphans {
				t.Fatalf("LeafChains = %v, %d orphans; want %v, %d", chains, orphans, tt.chains, tt.orphans)
			}
			if got := c.Distinct(); got != tt.distinct {
				t.Fatalf("Distinct = %d, want %d", got, tt.distinct)
			}
		})
	}
}
