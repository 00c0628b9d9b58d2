package wire

import (
	"reflect"
	"slices"
	"testing"
)

// removedSeeds are one-hash BlockRemoved maps as vLLM writes them, and near
// misses: other key orders, integer forms, media, a group, cut short.
func removedSeeds() [][]byte {
	var out [][]byte
	for _, ev := range []obj{
		{"type", "BlockRemoved", "block_hashes", arr{uint64(1) << 63}, "medium", "GPU", "group_idx", 0},
		{"type", "BlockRemoved", "block_hashes", arr{7}, "medium", "CPU"},
		{"type", "BlockRemoved", "block_hashes", arr{300}, "medium", nil, "group_idx", 3},
		{"type", "BlockRemoved", "block_hashes", arr{70000}, "medium", "lmcache-remote"},
		{"type", "BlockRemoved", "block_hashes", arr{1, 2}, "medium", "GPU"},
		{"type", "BlockRemoved", "block_hashes", arr{-5}, "medium", "GPU"},
		{"block_hashes", arr{9}, "type", "BlockRemoved", "medium", "GPU"},
		{"type", "BlockRemoved", "block_hashes", arr{9}, "medium", "GPU", "group_idx", 200},
		{"type", "BlockRemoved", "block_hashes", arr{9}, "medium", "GPU", "locality", "local"},
		{"type", "BlockStored", "block_hashes", arr{9}, "medium", "GPU"},
	} {
		p := pack(ev)
		out = append(out, p)
		for cut := 1; cut < len(p); cut += 3 {
			out = append(out, p[:cut])
		}
	}
	return out
}

// TestRemovedFastTakesVLLMShape: the fast path reads what vLLM writes for
// an eviction (and leaves everything else to decodeEventMap).
func TestRemovedFastTakesVLLMShape(t *testing.T) {
	var b Batch
	var ev Event
	r := &reader{b: pack(obj{"type", "BlockRemoved", "block_hashes", arr{uint64(1)<<63 | 5}, "medium", "GPU", "group_idx", 2})}
	if !decodeRemovedFast(r, &b, &ev) {
		t.Fatal("vLLM's one-hash BlockRemoved not taken by the fast path")
	}
	want := Event{Kind: KindBlockRemoved, BlockHashes: []uint64{1<<63 | 5}, Medium: "GPU", GroupIdx: 2}
	if !reflect.DeepEqual(ev, want) || r.off != len(r.b) {
		t.Fatalf("read %+v (to byte %d of %d), want %+v", ev, r.off, len(r.b), want)
	}
	r = &reader{b: pack(obj{"type", "BlockRemoved", "block_hashes", arr{1, 2}, "medium", "GPU"})}
	if decodeRemovedFast(r, &b, &ev) || r.off != 0 {
		t.Fatal("a two-hash removal taken by the fast path")
	}
}

// TestRemovedHeadChunks: the word-sized literals decodeRemovedFast compares
// spell removedHead.
func TestRemovedHeadChunks(t *testing.T) {
	if got := "\xa4type\xacBl" + "ockRemov" + "ed\xacblock" + "_hashes\x91"; got != removedHead {
		t.Fatalf("chunks spell %q, want %q", got, removedHead)
	}
	if got, want := "\xa9group_i"+"dx", string(pack("group_idx")); got != want {
		t.Fatalf("group_idx chunks spell %q, want %q", got, want)
	}
}

// FuzzRemovedFast checks that whatever decodeRemovedFast takes,
// decodeEventMap reads to the same event, arena and position, and that
// what it does not take it leaves untouched.
func FuzzRemovedFast(f *testing.F) {
	for _, s := range removedSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		fast, general := Batch{hashes: []uint64{42}}, Batch{hashes: []uint64{42}}
		var fe, ge Event
		fr, gr := &reader{b: p}, &reader{b: p}
		if !decodeRemovedFast(fr, &fast, &fe) {
			if fr.off != 0 || !slices.Equal(fast.hashes, []uint64{42}) || !reflect.DeepEqual(fe, Event{}) {
				t.Fatalf("declined %x but changed the reader, arena or event", p)
			}
			return
		}
		if err := decodeEventMap(gr, &general, &ge); err != nil {
			t.Fatalf("fast path took %x, which decodeEventMap rejects: %v", p, err)
		}
		if !reflect.DeepEqual(fe, ge) || fr.off != gr.off || !slices.Equal(fast.hashes, general.hashes) {
			t.Fatalf("%x: fast %+v to %d, arena %v; general %+v to %d, arena %v",
				p, fe, fr.off, fast.hashes, ge, gr.off, general.hashes)
		}
	})
}
