package index

import "testing"

// rebuildOf adds blocks [0, n) of sequence seed, held on media (0: chain
// only for the first chainOnly blocks).
func rebuildOf(ix *Index, r *Rebuild, seed, n, chainOnly int, media uint8) {
	toks := tokens(seed, 0, n)
	for b := range n {
		rb := RebuildBlock{Hash: engineHash(seed, b), Tokens: toks[b*testBS : (b+1)*testBS], Media: media}
		if b > 0 {
			rb.Parent, rb.HasParent = engineHash(seed, b-1), true
		}
		if b < chainOnly {
			rb.Media = 0
		}
		r.Add(rb)
	}
}

func (f *fixture) run(seed, n int, ep string) Match {
	keys, _ := AppendKeys(nil, testID, testBS, tokens(seed, 0, n))
	return f.ix.Lookup(keys, []string{ep}, nil)[0]
}

// TestReplaceMatchesLiveStores: a rebuild of what live stores built keys
// the same chains; what only the old state held goes, the new state's
// additions arrive, and removals apply afterwards through the new reverse
// map.
func TestReplaceMatchesLiveStores(t *testing.T) {
	f := newFixture(t, Options{})
	f.store(t, "a:1", 0, 1, 0, 6, MediumGPU) // held before and after
	f.store(t, "a:1", 0, 2, 0, 3, MediumGPU) // only before
	f.store(t, "b:1", 0, 1, 0, 6, MediumGPU) // another endpoint: untouched
	r := f.ix.NewRebuild(testID.Model)
	rebuildOf(f.ix, r, 1, 6, 0, 1<<MediumGPU)
	rebuildOf(f.ix, r, 3, 4, 2, 1<<MediumGPU|1<<MediumCPU) // new; first two blocks chain only
	res, err := f.ix.Replace("a:1", 0, r)
	if err != nil {
		t.Fatal(err)
	}
	if res.Kept != 6 || res.Added != 2 || res.Dropped != 3 {
		t.Fatalf("Replace = %+v, want 6 kept, 2 added, 3 dropped", res)
	}
	if m := f.run(1, 6, "a:1"); m.Confirmed != 6 {
		t.Fatalf("seq 1 on a:1: %d confirmed, want 6", m.Confirmed)
	}
	if m := f.run(2, 3, "a:1"); m.Confirmed != 0 {
		t.Fatalf("seq 2 on a:1: %d confirmed, want 0 (only the old state held it)", m.Confirmed)
	}
	// Blocks 2 and 3 of seq 3 are held, chained through the chain-only 0, 1:
	// the run from the first block stops at once, but the keys exist.
	keys, _ := AppendKeys(nil, testID, testBS, tokens(3, 0, 4))
	if m := f.ix.Lookup(keys[2:], []string{"a:1"}, nil)[0]; m.Confirmed != 2 {
		t.Fatalf("seq 3 blocks 2-3 on a:1: %d confirmed, want 2", m.Confirmed)
	}
	if m := f.run(1, 6, "b:1"); m.Confirmed != 6 {
		t.Fatalf("seq 1 on b:1: %d confirmed, want 6", m.Confirmed)
	}
	// A live store continuing a rebuilt chain chains (no unknown parent).
	before := f.ix.Stats().UnknownParent
	f.store(t, "a:1", 0, 1, 6, 2, MediumGPU)
	if m := f.run(1, 8, "a:1"); m.Confirmed != 8 || f.ix.Stats().UnknownParent != before {
		t.Fatalf("continuing store: %d confirmed, unknown parents %d -> %d",
			m.Confirmed, before, f.ix.Stats().UnknownParent)
	}
	// Removals find the rebuilt hashes; a CPU copy outlives the GPU one.
	if unk, _ := f.ix.Remove("a:1", 0, hashes(1, 3, 3), MediumGPU); unk != 0 {
		t.Fatalf("Remove: %d unknown", unk)
	}
	if m := f.run(1, 8, "a:1"); m.Confirmed != 3 {
		t.Fatalf("after removal: %d confirmed, want 3", m.Confirmed)
	}
	f.ix.Remove("a:1", 0, hashes(3, 2, 2), MediumGPU)
	if m := f.ix.Lookup(keys[2:], []string{"a:1"}, nil)[0]; m.Confirmed != 2 {
		t.Fatalf("CPU copies after the GPU removal: %d confirmed, want 2", m.Confirmed)
	}
}

// TestRebuildCounts: wrong block sizes are skipped, missing parents counted.
func TestRebuildCounts(t *testing.T) {
	f := newFixture(t, Options{})
	r := f.ix.NewRebuild("m")
	r.Add(RebuildBlock{Hash: 1, Tokens: []uint32{1, 2, 3}, Media: 1})
	r.Add(RebuildBlock{Hash: 2, Parent: 99, HasParent: true, Tokens: []uint32{1, 2, 3, 4}, Media: 1})
	if r.Skipped != 1 || r.UnknownParent != 1 || r.Held != 1 {
		t.Fatalf("rebuild counts %+v", r)
	}
	if _, err := f.ix.Replace("", 0, r); err == nil {
		t.Fatal("Replace with an empty endpoint: no error")
	}
}

// TestReplaceLarge: a replace of thousands of keys over many shards (the
// radix-sorted walk, the key tables reserved up front, the batched reverse
// puts) keeps what both states hold, adds and drops the rest, and every
// rebuilt hash removes its block afterwards.
func TestReplaceLarge(t *testing.T) {
	f := newFixture(t, Options{Shards: 16})
	const chains, per = 200, 20
	for s := range chains {
		f.store(t, "a:1", 0, s, 0, per, MediumGPU)
	}
	r := f.ix.NewRebuild(testID.Model)
	r.Reserve(chains * per)
	for s := chains / 2; s < chains+chains/2; s++ { // half kept, half new
		rebuildOf(f.ix, r, s, per, 0, 1<<MediumGPU)
	}
	res, err := f.ix.Replace("a:1", 0, r)
	if err != nil {
		t.Fatal(err)
	}
	half := chains / 2 * per
	if res.Kept != half || res.Added != half || res.Dropped != half {
		t.Fatalf("Replace = %+v, want %d kept, added and dropped", res, half)
	}
	for s := range chains + chains/2 {
		want := per
		if s < chains/2 {
			want = 0
		}
		if m := f.run(s, per, "a:1"); m.Confirmed != want {
			t.Fatalf("chain %d: %d confirmed, want %d", s, m.Confirmed, want)
		}
	}
	for s := chains / 2; s < chains+chains/2; s++ {
		if unk, _ := f.ix.Remove("a:1", 0, hashes(s, 0, per), MediumGPU); unk != 0 {
			t.Fatalf("chain %d: %d hashes unknown after the replace", s, unk)
		}
	}
	if n := f.ix.Stats().Keys; n != 0 {
		t.Fatalf("%d keys left after removing every rebuilt block", n)
	}
}

// TestRebuildKeysIdentities: a rebuilt block keyed under its chain's salt
// and its extra identity gets the key a live store gave it, so salted and
// multimodal chains mean after a snapshot sync what they meant before.
func TestRebuildKeysIdentities(t *testing.T) {
	salted := Identity{Model: testID.Model, CacheSalt: "tenant"}
	extra := []uint64{0, 7, 0}
	f := newFixture(t, Options{})
	if _, err := f.ix.Store(Stored{Endpoint: "live:1", Hashes: hashes(1, 0, 3), Tokens: tokens(1, 0, 3),
		BlockSize: testBS, Identity: salted, Medium: MediumGPU, Extra: extra}); err != nil {
		t.Fatal(err)
	}
	r := f.ix.NewRebuild(testID.Model)
	toks := tokens(1, 0, 3)
	for b := range 3 {
		rb := RebuildBlock{Hash: engineHash(1, b), Tokens: toks[b*testBS : (b+1)*testBS], Media: 1 << MediumGPU, Extra: extra[b]}
		if b > 0 {
			rb.Parent, rb.HasParent = engineHash(1, b-1), true
		} else {
			rb.CacheSalt = salted.CacheSalt
		}
		r.Add(rb)
	}
	if _, err := f.ix.Replace("rebuilt:1", 0, r); err != nil {
		t.Fatal(err)
	}
	root := func(id Identity) []Key {
		keys, err := AppendChainExtra(nil, id.Root(), testBS, toks, extra)
		if err != nil {
			t.Fatal(err)
		}
		return keys
	}
	text, _ := AppendKeys(nil, salted, testBS, toks)
	for _, tc := range []struct {
		name string
		keys []Key
		want int
	}{
		{"salted chain with its media", root(salted), 3},
		{"salted text of the media's tokens", text, 1},
		{"unsalted chain", root(testID), 0},
	} {
		m := f.ix.Lookup(tc.keys, []string{"live:1", "rebuilt:1"}, nil)
		if m[0].Confirmed != tc.want || m[1].Confirmed != tc.want {
			t.Errorf("%s: live %d, rebuilt %d confirmed, want %d on both", tc.name, m[0].Confirmed, m[1].Confirmed, tc.want)
		}
	}
}
