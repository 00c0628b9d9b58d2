package index

import (
	"errors"
	"testing"
	"time"
)

func TestStoreAndLookup(t *testing.T) {
	tests := []struct {
		name  string
		apply func(t *testing.T, f *fixture)
		want  []Match // for endpoints a, b
	}{
		{"nothing stored", func(*testing.T, *fixture) {}, []Match{{}, {}}},
		{"full prefix", func(t *testing.T, f *fixture) { f.store(t, "a", 0, 1, 0, 4, MediumGPU) },
			[]Match{{Confirmed: 4, Weighted: 4}, {}}},
		{"chunked store chains through the parent", func(t *testing.T, f *fixture) {
			f.store(t, "a", 0, 1, 0, 2, MediumGPU)
			f.store(t, "a", 0, 1, 2, 2, MediumGPU)
		}, []Match{{Confirmed: 4, Weighted: 4}, {}}},
		{"stops at the first gap", func(t *testing.T, f *fixture) {
			f.store(t, "b", 0, 1, 0, 2, MediumGPU)
			f.store(t, "b", 0, 2, 0, 1, MediumGPU)
		}, []Match{{}, {Confirmed: 2, Weighted: 2}}},
		{"other sequence does not match", func(t *testing.T, f *fixture) { f.store(t, "a", 0, 2, 0, 4, MediumGPU) },
			[]Match{{}, {}}},
		{"ranks are a union", func(t *testing.T, f *fixture) {
			f.store(t, "a", 1, 1, 0, 3, MediumGPU)
		}, []Match{{Confirmed: 3, Weighted: 3}, {}}},
		{"cpu tier weighs less", func(t *testing.T, f *fixture) { f.store(t, "a", 0, 1, 0, 2, MediumCPU) },
			[]Match{{Confirmed: 2, Weighted: 1.6}, {}}},
		{"best medium counts", func(t *testing.T, f *fixture) {
			f.store(t, "a", 0, 1, 0, 1, MediumStorage)
			f.store(t, "a", 1, 1, 0, 1, MediumGPU)
		}, []Match{{Confirmed: 1, Weighted: 1}, {}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Options{})
			tt.apply(t, f)
			got := f.lookup(t, 1, 4, "a", "b")
			for i := range tt.want {
				if !matchEqual(got[i], tt.want[i]) {
					t.Errorf("endpoint %d: got %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func matchEqual(a, b Match) bool {
	d := a.Weighted - b.Weighted
	return a.Confirmed == b.Confirmed && a.Speculative == b.Speculative && d < 1e-9 && d > -1e-9
}

// TestRefcounts: two engine hashes for the same content (say two KV cache
// groups) are two copies, and a block ends with its last copy's removal.
func TestRefcounts(t *testing.T) {
	f := newFixture(t, Options{})
	f.store(t, "a", 0, 1, 0, 2, MediumGPU)
	other := hashes(7, 0, 2) // same tokens, other engine hashes
	if _, err := f.ix.Store(Stored{Endpoint: "a", Hashes: other, Tokens: tokens(1, 0, 2), BlockSize: testBS,
		Identity: testID, Medium: MediumGPU}); err != nil {
		t.Fatal(err)
	}
	if n, _ := f.ix.Remove("a", 0, hashes(1, 1, 1), MediumGPU); n != 0 {
		t.Fatalf("first removal: %d unknown", n)
	}
	if got := f.lookup(t, 1, 2, "a")[0]; got.Confirmed != 2 {
		t.Fatalf("after one removal of two copies: %+v, want 2 confirmed", got)
	}
	f.ix.Remove("a", 0, other[1:], MediumGPU)
	if got := f.lookup(t, 1, 2, "a")[0]; got.Confirmed != 1 {
		t.Fatalf("after both removals: %+v, want 1 confirmed", got)
	}
	if n, _ := f.ix.Remove("a", 0, hashes(1, 1, 1), MediumGPU); n != 1 {
		t.Errorf("removing a gone block: %d unknown, want 1", n)
	}
	if st := f.ix.Stats(); st.Entries != 1 || st.Keys != 1 {
		t.Errorf("stats %+v, want 1 entry and 1 key", st)
	}
}

// TestReannouncedBlocksStoreOnce: vLLM's kv_cache_report_mode=full announces
// a reused block again under the same hash. The holder still has one copy,
// so its one BlockRemoved ends it; a re-announcement on another medium is a
// copy there.
func TestReannouncedBlocksStoreOnce(t *testing.T) {
	f := newFixture(t, Options{})
	f.store(t, "a", 0, 1, 0, 3, MediumGPU)
	f.store(t, "a", 0, 1, 0, 3, MediumGPU) // re-announced
	f.store(t, "a", 0, 1, 0, 3, MediumGPU) // and again
	if st := f.ix.Stats(); st.Reannounced != 6 {
		t.Fatalf("reannounced %d blocks, want 6", st.Reannounced)
	}
	if n, _ := f.ix.Remove("a", 0, hashes(1, 2, 1), MediumGPU); n != 0 {
		t.Fatalf("removal: %d unknown", n)
	}
	if got := f.lookup(t, 1, 3, "a")[0]; got.Confirmed != 2 {
		t.Fatalf("after the last block's one removal: %+v, want the chain to end at 2 confirmed", got)
	}
	f.store(t, "a", 0, 1, 0, 1, MediumCPU) // an offload copy is a copy
	f.ix.Remove("a", 0, hashes(1, 0, 1), MediumGPU)
	if got := f.lookup(t, 1, 3, "a")[0]; got.Confirmed != 2 {
		t.Fatalf("GPU copy removed, CPU copy kept: %+v, want 2 confirmed", got)
	}
	f.ix.Remove("a", 0, hashes(1, 0, 1), MediumCPU)
	if got := f.lookup(t, 1, 3, "a")[0]; got.Confirmed != 0 {
		t.Fatalf("both copies of the root removed: %+v, want 0 confirmed", got)
	}
}

func TestRemovePerMedium(t *testing.T) {
	f := newFixture(t, Options{})
	f.store(t, "a", 0, 1, 0, 1, MediumGPU)
	f.ix.Store(Stored{Endpoint: "a", Hashes: hashes(1, 0, 1), Medium: MediumCPU}) // offload copy
	if n, _ := f.ix.Remove("a", 0, hashes(1, 0, 1), MediumGPU); n != 0 {
		t.Fatalf("GPU removal: %d unknown", n)
	}
	if got := f.lookup(t, 1, 1, "a")[0]; got.Confirmed != 1 || got.Weighted != DefaultWeights[MediumCPU] {
		t.Errorf("after GPU eviction the CPU copy should remain: %+v", got)
	}
	if n, _ := f.ix.Remove("a", 0, hashes(1, 0, 1), MediumGPU); n != 1 {
		t.Errorf("second GPU removal: %d unknown, want 1", n)
	}
}

func TestUnknownParent(t *testing.T) {
	f := newFixture(t, Options{})
	res := f.store(t, "a", 0, 1, 2, 2, MediumGPU) // parent block 1 never stored
	if !res.UnknownParent || res.Blocks != 2 {
		t.Errorf("result %+v, want UnknownParent and 2 blocks", res)
	}
	if st := f.ix.Stats(); st.UnknownParent != 1 || st.Entries != 2 {
		t.Errorf("stats %+v: want 1 unknown parent, 2 entries", st)
	}
	if got := f.lookup(t, 1, 4, "a")[0]; got.Blocks() != 0 {
		t.Errorf("blocks keyed from an unknown parent must not match the real chain: %+v", got)
	}
	// They are removable all the same.
	if n, _ := f.ix.Remove("a", 0, hashes(1, 2, 2), MediumGPU); n != 0 {
		t.Errorf("%d unknown on removal", n)
	}
}

func TestTokenlessStore(t *testing.T) {
	f := newFixture(t, Options{})
	res, err := f.ix.Store(Stored{Endpoint: "a", Hashes: []uint64{42}, Medium: MediumCPU})
	if err != nil || res.Skipped != 1 || res.Blocks != 0 {
		t.Errorf("unknown hash without tokens: %+v, %v", res, err)
	}
	if st := f.ix.Stats(); st.Unkeyed != 1 {
		t.Errorf("unkeyed = %d, want 1", st.Unkeyed)
	}
}

func TestLengthMismatch(t *testing.T) {
	f := newFixture(t, Options{})
	ev := Stored{Endpoint: "a", Hashes: hashes(1, 0, 3), Tokens: tokens(1, 0, 2), BlockSize: testBS, Identity: testID}
	res, err := f.ix.Store(ev)
	if err != nil || res.Blocks != 2 || res.Skipped != 1 {
		t.Errorf("got %+v, %v; want 2 blocks, 1 skipped", res, err)
	}
	if st := f.ix.Stats(); st.LengthMismatch != 1 {
		t.Errorf("length mismatch = %d, want 1", st.LengthMismatch)
	}
}

func TestClears(t *testing.T) {
	tests := []struct {
		name  string
		clear func(ix *Index) (int, error)
		wantA Match
		drop  int
	}{
		{"AllBlocksCleared on rank 0 keeps rank 1", func(ix *Index) (int, error) { return ix.ClearRank("a", 0) },
			Match{Confirmed: 2, Weighted: 2}, 3},
		{"endpoint clear drops every rank", func(ix *Index) (int, error) { return ix.ClearEndpoint("a") },
			Match{}, 5},
		{"unknown endpoint is a no-op", func(ix *Index) (int, error) { return ix.ClearEndpoint("zz") },
			Match{Confirmed: 3, Weighted: 3}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Options{})
			f.store(t, "a", 0, 1, 0, 3, MediumGPU)
			f.store(t, "a", 1, 1, 0, 2, MediumGPU)
			f.store(t, "b", 0, 1, 0, 3, MediumGPU)
			n, err := tt.clear(f.ix)
			if err != nil || n != tt.drop {
				t.Fatalf("clear: %d, %v; want %d dropped", n, err, tt.drop)
			}
			got := f.lookup(t, 1, 3, "a", "b")
			if !matchEqual(got[0], tt.wantA) || got[1].Confirmed != 3 {
				t.Errorf("got %+v, want a=%+v and b untouched", got, tt.wantA)
			}
		})
	}
}

func TestEngineHashReuse(t *testing.T) {
	f := newFixture(t, Options{})
	f.store(t, "a", 0, 1, 0, 1, MediumGPU)
	// The engine reuses hash (1,0) for other content: the old block is gone.
	ev := Stored{Endpoint: "a", Hashes: hashes(1, 0, 1), Tokens: tokens(2, 0, 1), BlockSize: testBS, Identity: testID}
	if _, err := f.ix.Store(ev); err != nil {
		t.Fatal(err)
	}
	if got := f.lookup(t, 1, 1, "a")[0]; got.Blocks() != 0 {
		t.Errorf("old content still matches: %+v", got)
	}
	if got := f.lookup(t, 2, 1, "a")[0]; got.Confirmed != 1 {
		t.Errorf("new content does not match: %+v", got)
	}
}

func TestBadInput(t *testing.T) {
	f := newFixture(t, Options{})
	good := Stored{Endpoint: "a", Hashes: hashes(1, 0, 1), Tokens: tokens(1, 0, 1), BlockSize: testBS, Identity: testID}
	tests := []struct {
		name string
		call func() error
		want error
	}{
		{"store without endpoint", func() error { ev := good; ev.Endpoint = ""; _, err := f.ix.Store(ev); return err }, ErrEndpoint},
		{"store with negative rank", func() error { ev := good; ev.Rank = -1; _, err := f.ix.Store(ev); return err }, ErrRank},
		{"store with rank above max", func() error { ev := good; ev.Rank = 256; _, err := f.ix.Store(ev); return err }, ErrRank},
		{"store with other block size", func() error { ev := good; ev.BlockSize = 16; _, err := f.ix.Store(ev); return err }, ErrBlockSize},
		{"store with block size not the index's", func() error {
			ev := good
			ev.Tokens = []uint32{1, 2, 3}
			ev.BlockSize = 3
			_, err := f.ix.Store(ev)
			return err
		}, ErrBlockSize},
		{"remove without endpoint", func() error { _, err := f.ix.Remove("", 0, nil, MediumGPU); return err }, ErrEndpoint},
		{"clear rank out of range", func() error { _, err := f.ix.ClearRank("a", 300); return err }, ErrRank},
		{"clear without endpoint", func() error { _, err := f.ix.ClearEndpoint(""); return err }, ErrEndpoint},
		{"speculate without endpoint", func() error { _, err := f.ix.Speculate("", nil, 1, time.Second); return err }, ErrEndpoint},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); !errors.Is(err, tt.want) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		ok   bool
	}{
		{"zero value", Options{}, true},
		{"negative block size", Options{BlockSize: -1}, false},
		{"huge block size", Options{BlockSize: maxBlockSize + 1}, false},
		{"negative bytes", Options{MaxBytes: -1}, false},
		{"negative shards", Options{Shards: -2}, false},
		{"negative grace", Options{Grace: -time.Second}, false},
		{"weight above one", Options{Weights: Weights{MediumCPU: 2}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.opts)
			if (err == nil) != tt.ok {
				t.Errorf("New: %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrOptions) {
				t.Errorf("error %v does not wrap ErrOptions", err)
			}
		})
	}
}

func TestParseMedium(t *testing.T) {
	tests := map[string]Medium{"": MediumGPU, "GPU": MediumGPU, "cpu": MediumCPU, "STORAGE": MediumStorage, "lmcache-remote": MediumOther,
		"CPU_PINNED": MediumCPU, "DISK": MediumStorage, "EXTERNAL": MediumStorage, "CPU": MediumCPU, "gpu": MediumGPU, "Gpu": MediumGPU}
	for in, want := range tests {
		t.Run(in, func(t *testing.T) {
			if got := ParseMedium(in); got != want {
				t.Errorf("ParseMedium(%q) = %v, want %v", in, got, want)
			}
		})
	}
}
