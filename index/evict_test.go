package index

import (
	"testing"
	"time"
)

func TestEvictionKeepsRecentlyUseful(t *testing.T) {
	const perKey = keyBytes + entryBytes
	// Recency is tracked in ticks of 16 calls. Sequence 1 is looked up for a
	// whole tick after every store, so its stamp is always the newest: only
	// a sample made entirely of equally fresh keys could pick it, which
	// eviction's resampling rules out.
	f := newFixture(t, Options{Shards: 1, MaxBytes: 400 * perKey})
	f.store(t, "a", 0, 1, 0, 10, MediumGPU)
	for s := 2; s < 150; s++ {
		f.store(t, "a", 0, s, 0, 10, MediumGPU)
		for range 16 {
			f.lookup(t, 1, 10, "a") // keeps sequence 1 useful
		}
	}
	st := f.ix.Stats()
	if st.Bytes > 400*perKey {
		t.Errorf("estimated %d bytes, bound %d", st.Bytes, 400*perKey)
	}
	if st.EvictedKeys == 0 || st.Keys > 400 {
		t.Errorf("stats %+v: want evictions and at most 400 keys", st)
	}
	if m := f.lookup(t, 1, 10, "a")[0]; m.Confirmed != 10 {
		t.Errorf("the recently matched sequence lost blocks: %+v", m)
	}
	if m := f.lookup(t, 2, 10, "a")[0]; m.Confirmed == 10 {
		t.Errorf("the oldest unused sequence survived whole: %+v", m)
	}
}

func TestEvictionCompactsReverseMap(t *testing.T) {
	f := newFixture(t, Options{Shards: 1, MaxBytes: 50 * (keyBytes + entryBytes)})
	for s := 1; s < 2000; s++ {
		f.store(t, "a", 0, s, 0, 4, MediumGPU)
	}
	hd := f.ix.holders.get(makeHolder(0, 0))
	live := hd.live.Load()
	if live > 50 || live != f.ix.Stats().Entries {
		t.Errorf("live %d, entries %d: want equal and at most 50", live, f.ix.Stats().Entries)
	}
	if n := hd.rev.len(); int64(n) > live+live/4+1024+4 {
		t.Errorf("reverse map holds %d hashes for %d live entries", n, live)
	}
	// Removing evicted blocks is counted as unknown, not an error.
	if n, err := f.ix.Remove("a", 0, hashes(1, 0, 4), MediumGPU); err != nil || n != 4 {
		t.Errorf("Remove of evicted blocks: %d unknown, %v; want 4", n, err)
	}
}

func TestEvictionDropsPredictions(t *testing.T) {
	f := newFixture(t, Options{Shards: 1, MaxBytes: 10 * (keyBytes + entryBytes)})
	f.store(t, "a", 0, 1, 0, 1, MediumGPU)
	f.ix.Speculate("b", keysOf(t, 1, 1), 9, time.Minute)
	for s := 2; s < 40; s++ {
		f.store(t, "a", 0, s, 0, 1, MediumGPU)
	}
	var dropped int
	for _, o := range f.obs.take() {
		if o.Kind == Dropped && o.Decision == 9 {
			dropped += o.Blocks
		}
	}
	if dropped != 1 {
		t.Errorf("prediction on an evicted key: %d dropped outcomes, want 1", dropped)
	}
}
