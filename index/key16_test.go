package index

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// generic16 keys 16-token blocks through chain, the path every other block
// size takes, so the fast path can be compared with it.
func generic16(parent Key, toks []uint32) []Key {
	var out []Key
	b := make([]byte, block16Len)
	for i := range len(toks) / 16 {
		for j, t := range toks[16*i : 16*i+16] {
			binary.LittleEndian.PutUint32(b[8+4*j:], t)
		}
		parent = chain(b, parent)
		out = append(out, parent)
	}
	return out
}

func TestChain16MatchesXXH3(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		name   string
		parent Key
		toks   []uint32
	}{
		{"zero block", 0, make([]uint32, 16)},
		{"all ones", ^Key(0), func() []uint32 {
			s := make([]uint32, 16)
			for i := range s {
				s[i] = ^uint32(0)
			}
			return s
		}()},
		{"counting tokens, model root", Identity{Model: "m"}.Root(), func() []uint32 {
			s := make([]uint32, 64)
			for i := range s {
				s[i] = uint32(i)
			}
			return s
		}()},
		{"random chain", Key(rng.Uint64()), func() []uint32 {
			s := make([]uint32, 16*50+7)
			for i := range s {
				s[i] = rng.Uint32()
			}
			return s
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := generic16(tt.parent, tt.toks)
			got := appendU32x16(nil, tt.parent, tt.toks)
			ints := make([]int, len(tt.toks))
			for i, v := range tt.toks {
				ints[i] = int(v)
			}
			gotInt, bad := appendIntx16(nil, tt.parent, ints)
			if bad != -1 {
				t.Fatalf("int path rejected block %d", bad)
			}
			for i := range want {
				if got[i] != want[i] || gotInt[i] != want[i] {
					t.Fatalf("block %d: uint32 path %x, int path %x, chain %x", i, got[i], gotInt[i], want[i])
				}
			}
			if len(got) != len(want) || len(gotInt) != len(want) {
				t.Fatalf("got %d and %d keys, want %d", len(got), len(gotInt), len(want))
			}
		})
	}
}

func TestAppendKeys16RejectsWideIDs(t *testing.T) {
	tests := []struct {
		name string
		at   int // token index of the bad id
		id   int
	}{
		{"negative in first block", 3, -1},
		{"beyond 32 bits in second block", 20, 1 << 32},
		{"odd position", 17, 1 << 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			toks := seq(1, 48)
			toks[tt.at] = tt.id
			keys, err := AppendKeys(nil, Identity{Model: "m"}, 16, toks)
			if err == nil {
				t.Fatal("no error for an id beyond 32 bits")
			}
			if want := tt.at / 16; len(keys) != want {
				t.Fatalf("%d keys before the bad block, want %d", len(keys), want)
			}
		})
	}
}

// FuzzChain16 compares the 16-token fast path with chain on arbitrary bytes.
func FuzzChain16(f *testing.F) {
	f.Add(uint64(0), make([]byte, 64))
	f.Add(uint64(1), make([]byte, 64*3+5))
	f.Add(^uint64(0), []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, parent uint64, raw []byte) {
		toks := make([]uint32, len(raw)/4)
		for i := range toks {
			toks[i] = binary.LittleEndian.Uint32(raw[4*i:])
		}
		want := generic16(Key(parent), toks)
		got := appendU32x16(nil, Key(parent), toks)
		if len(got) != len(want) {
			t.Fatalf("%d keys, want %d", len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("block %d: %x, want %x", i, got[i], want[i])
			}
		}
	})
}
