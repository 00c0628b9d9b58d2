package index

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortedShardsMatchesInsertSorted checks the bit-set path of
// sortedShards (up to 64 shards) against insertSorted, the path of larger
// indexes, over random batches of every size and several shard counts.
func TestSortedShardsMatchesInsertSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, nShards := range []int{1, 2, 16, 64, 128} {
		ix, err := New(Options{BlockSize: 16, Shards: nShards})
		if err != nil {
			t.Fatal(err)
		}
		for range 2000 {
			keys := make([]Key, rng.IntN(eventBatch+1))
			for i := range keys {
				keys[i] = Key(rng.Uint64())
				if i > 0 && rng.IntN(4) == 0 {
					keys[i] = keys[rng.IntN(i)] // a shard (and key) repeated
				}
			}
			var want []uint64
			for _, k := range keys {
				want = insertSorted(want, ix.shardIndex(k))
			}
			var buf [eventBatch]uint64
			got := ix.sortedShards(keys, buf[:])
			if !slices.Equal(got, want) {
				t.Fatalf("%d shards, keys %x: got %v, want %v", nShards, keys, got, want)
			}
		}
	}
}
