package index

import (
	"sync"
	"testing"
	"time"
)

// TestConcurrentUse runs event appliers, lookups, predictions, clears and
// sweeps at once (meaningful under -race), then checks that the index agrees
// with itself: every endpoint cleared at the end holds nothing.
func TestConcurrentUse(t *testing.T) {
	f := newFixture(t, Options{Shards: 4, MaxBytes: 200 * (keyBytes + entryBytes)})
	eps := []string{"a", "b", "c"}
	var wg sync.WaitGroup
	for i, ep := range eps {
		wg.Go(func() { // one event consumer per endpoint, as in production
			for s := range 200 {
				f.store(t, ep, s%2, s%7, 0, 1+s%5, MediumGPU)
				f.ix.Remove(ep, s%2, hashes(s%7, s%3, 1), MediumGPU)
				if s%50 == 49 {
					f.ix.ClearRank(ep, 0)
				}
			}
		})
		wg.Go(func() {
			for s := range 300 {
				f.lookup(t, s%7, 5, eps...)
				f.ix.Speculate(eps[(s+i)%3], keysOf(t, s%7, 3), DecisionID(s), time.Millisecond)
				if s%10 == 0 { // a long prediction, inserted shard by shard
					f.ix.Speculate(eps[(s+i)%3], keysOf(t, s%7, 80), DecisionID(s), time.Millisecond)
					f.lookup(t, s%7, 80, eps...)
				}
				f.clock.Advance(time.Millisecond)
				f.ix.Sweep()
			}
		})
	}
	wg.Wait()
	for _, ep := range eps {
		if _, err := f.ix.ClearEndpoint(ep); err != nil {
			t.Fatal(err)
		}
	}
	st := f.ix.Stats()
	if st.Entries != 0 || st.Keys != 0 || st.Speculative != 0 {
		t.Errorf("after clearing every endpoint: %+v", st)
	}
	for _, ep := range eps {
		for r := range 2 {
			if hd, _ := f.ix.holderFor(ep, r, false); hd != nil && hd.live.Load() != 0 {
				t.Errorf("%s/%d: live count %d after clear", ep, r, hd.live.Load())
			}
		}
	}
}
