package index

import "testing"

// TestLongEventsAndHashReuse checks events of many blocks, engine hashes
// reused within and across events' stretches, and repeated removals.
func TestLongEventsAndHashReuse(t *testing.T) {
	const stretch = lookupBatch // events spanning several of Lookup's batches
	const ep = "10.0.0.1:8000"
	tests := []struct {
		name        string
		blocks      int
		reuse       map[int]int // block -> earlier block whose engine hash it reuses
		remove      []int       // blocks whose hashes are removed, in order
		wantEntries int64       // after the store
		wantUnknown int
		wantLeft    int64 // entries after the removal
	}{
		{"longer than a batch", 3*stretch + 3, nil, nil, 3*stretch + 3, 0, 3*stretch + 3},
		{"remove more than a batch, some twice", 2*stretch + 1, nil,
			[]int{0, 1, 2, 0, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 2}, 2*stretch + 1, 3, 0},
		{"hash reused within a batch drops the first key", 5, map[int]int{3: 1}, []int{1}, 4, 0, 3},
		{"hash reused across batches", stretch + 2, map[int]int{stretch + 1: 0}, []int{0}, stretch + 1, 0, stretch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Options{Shards: 4})
			hs := hashes(1, 0, tt.blocks)
			for b, from := range tt.reuse {
				hs[b] = hs[from]
			}
			ev := Stored{Endpoint: ep, Hashes: hs, Tokens: tokens(1, 0, tt.blocks), BlockSize: testBS, Identity: testID}
			if _, err := f.ix.Store(ev); err != nil {
				t.Fatal(err)
			}
			if got := f.ix.Stats().Entries; got != tt.wantEntries {
				t.Fatalf("after store: %d entries, want %d", got, tt.wantEntries)
			}
			if len(tt.reuse) == 0 {
				if m := f.lookup(t, 1, tt.blocks, ep)[0]; m.Confirmed != tt.blocks {
					t.Fatalf("lookup after store: %+v, want %d confirmed", m, tt.blocks)
				}
			}
			rm := make([]uint64, len(tt.remove))
			for i, b := range tt.remove {
				rm[i] = hs[b]
			}
			unknown, err := f.ix.Remove(ep, 0, rm, MediumGPU)
			if err != nil || unknown != tt.wantUnknown {
				t.Fatalf("Remove: %d unknown, %v; want %d", unknown, err, tt.wantUnknown)
			}
			if got := f.ix.Stats().Entries; got != tt.wantLeft {
				t.Fatalf("after remove: %d entries, want %d", got, tt.wantLeft)
			}
			if hd := f.ix.holders.get(makeHolder(0, 0)); hd.live.Load() != tt.wantLeft {
				t.Fatalf("live count %d, want %d", hd.live.Load(), tt.wantLeft)
			}
		})
	}
}
