package index

import (
	"errors"
	"slices"
	"testing"
)

func seq(from, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = from + i
	}
	return out
}

func mustKeys(t *testing.T, id Identity, bs int, toks []int) []Key {
	t.Helper()
	keys, err := AppendKeys(nil, id, bs, toks)
	if err != nil {
		t.Fatalf("AppendKeys: %v", err)
	}
	return keys
}

func TestAppendKeysCounts(t *testing.T) {
	tests := []struct {
		name   string
		tokens int
		bs     int
		want   int
	}{
		{"empty", 0, 16, 0},
		{"shorter than a block", 15, 16, 0},
		{"exactly one block", 16, 16, 1},
		{"tail is not keyed", 47, 16, 2},
		{"block size one", 5, 1, 5},
		{"large block", 130, 64, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := len(mustKeys(t, Identity{Model: "m"}, tt.bs, seq(1, tt.tokens))); got != tt.want {
				t.Errorf("got %d keys, want %d", got, tt.want)
			}
		})
	}
}

func TestAppendKeysIdentity(t *testing.T) {
	base := Identity{Model: "llama"}
	toks := seq(100, 64)
	ref := mustKeys(t, base, 16, toks)
	tests := []struct {
		name string
		id   Identity
		same bool
	}{
		{"same identity", Identity{Model: "llama"}, true},
		{"other model", Identity{Model: "qwen"}, false},
		{"adapter", Identity{Model: "llama", LoRA: "sql"}, false},
		{"adapter named like the model", Identity{Model: "x", LoRA: "llama"}, false},
		{"salt", Identity{Model: "llama", CacheSalt: "a"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustKeys(t, tt.id, 16, toks)
			for i := range got {
				if (got[i] == ref[i]) != tt.same {
					t.Fatalf("block %d: equal=%v, want %v", i, got[i] == ref[i], tt.same)
				}
			}
		})
	}
}

func TestAppendKeysSaltIsolation(t *testing.T) {
	toks := seq(7, 48)
	a := mustKeys(t, Identity{Model: "m", CacheSalt: "tenant-a"}, 16, toks)
	b := mustKeys(t, Identity{Model: "m", CacheSalt: "tenant-b"}, 16, toks)
	a2 := mustKeys(t, Identity{Model: "m", CacheSalt: "tenant-a"}, 16, toks)
	if !slices.Equal(a, a2) {
		t.Fatal("the same salt must give the same keys")
	}
	for i := range a {
		if a[i] == b[i] {
			t.Errorf("block %d: salts tenant-a and tenant-b share a key", i)
		}
	}
}

func TestAppendKeysChaining(t *testing.T) {
	id := Identity{Model: "m"}
	x := seq(0, 48)
	y := slices.Clone(x)
	y[3] = 999 // differs in the first block only
	kx, ky := mustKeys(t, id, 16, x), mustKeys(t, id, 16, y)
	for i := range kx {
		if kx[i] == ky[i] {
			t.Errorf("block %d: a change in block 0 must change every later key", i)
		}
	}
	z := slices.Clone(x)
	z[40] = 999 // differs in the last block only
	kz := mustKeys(t, id, 16, z)
	if kz[0] != kx[0] || kz[1] != kx[1] || kz[2] == kx[2] {
		t.Errorf("a change in block 2 must change only block 2: %v vs %v", kz, kx)
	}
	// The same block content at another position has another key.
	rep := append(seq(0, 16), seq(0, 16)...)
	if k := mustKeys(t, id, 16, rep); k[0] == k[1] {
		t.Error("repeated block content at two positions shares a key")
	}
}

func TestAppendChainContinues(t *testing.T) {
	id := Identity{Model: "m", CacheSalt: "s"}
	toks := seq(5, 80)
	full := mustKeys(t, id, 16, toks)
	head := mustKeys(t, id, 16, toks[:32])
	tail, err := AppendChain(head, head[len(head)-1], 16, toks[32:])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(full, tail) {
		t.Errorf("continued chain %v differs from full chain %v", tail, full)
	}
}

func TestAppendKeysTokenTypes(t *testing.T) {
	id := Identity{Model: "m"}
	ints := seq(1000, 40)
	want := mustKeys(t, id, 8, ints)
	u32 := make([]uint32, len(ints))
	i32 := make([]int32, len(ints))
	i64 := make([]int64, len(ints))
	for i, v := range ints {
		u32[i], i32[i], i64[i] = uint32(v), int32(v), int64(v)
	}
	check := func(name string, got []Key, err error) {
		t.Run(name, func(t *testing.T) {
			if err != nil || !slices.Equal(got, want) {
				t.Errorf("got %v, %v; want %v", got, err, want)
			}
		})
	}
	g1, e1 := AppendKeys(nil, id, 8, u32)
	check("uint32", g1, e1)
	g2, e2 := AppendKeys(nil, id, 8, i32)
	check("int32", g2, e2)
	g3, e3 := AppendKeys(nil, id, 8, i64)
	check("int64", g3, e3)
}

func TestAppendKeysErrors(t *testing.T) {
	tests := []struct {
		name   string
		bs     int
		tokens []int64
		want   error
	}{
		{"zero block size", 0, []int64{1}, ErrBlockSize},
		{"negative block size", -4, []int64{1}, ErrBlockSize},
		{"block size too large", maxBlockSize + 1, []int64{1}, ErrBlockSize},
		{"negative token", 2, []int64{1, -1}, ErrTokenRange},
		{"token above 32 bits", 2, []int64{1 << 32, 1}, ErrTokenRange},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := AppendKeys(nil, Identity{Model: "m"}, tt.bs, tt.tokens)
			if !errors.Is(err, tt.want) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
		})
	}
	t.Run("negative int32", func(t *testing.T) {
		if _, err := AppendKeys(nil, Identity{}, 1, []int32{-5}); !errors.Is(err, ErrTokenRange) {
			t.Errorf("got %v, want ErrTokenRange", err)
		}
	})
}
