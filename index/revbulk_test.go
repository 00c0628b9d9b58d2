package index

import (
	"math/rand/v2"
	"testing"
)

// TestRevPutAll: a batch put, small (one by one) or large (grouped first),
// holds what puts one by one would, including hash 0 and a hash given twice
// in the batch (the later key wins), on top of entries already there.
func TestRevPutAll(t *testing.T) {
	for _, n := range []int{10, bulkMin, 3 * bulkMin} {
		var rt revTable
		ref := map[uint64]Key{}
		for i := range 100 {
			h := rand.Uint64()
			rt.put(h, Key(i))
			ref[h] = Key(i)
		}
		batch := make([]revSlot, 0, n+2)
		for i := range n {
			h := uint64(i) << 20 // low bits alone would pile these up
			batch = append(batch, revSlot{h, Key(1000 + i)})
			ref[h] = Key(1000 + i)
		}
		batch = append(batch, revSlot{1 << 20, 7}, revSlot{0, 9}) // a repeat (later wins) and hash 0
		ref[1<<20], ref[0] = 7, 9
		rt.putAll(batch)
		checkRev(t, &rt, ref)
	}
}
