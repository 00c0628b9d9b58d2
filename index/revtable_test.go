package index

import (
	"math/rand/v2"
	"testing"
)

func checkRev(t *testing.T, rt *revTable, ref map[uint64]Key) {
	t.Helper()
	if rt.len() != len(ref) {
		t.Fatalf("table holds %d hashes, reference %d", rt.len(), len(ref))
	}
	for h, k := range ref {
		if got, ok := rt.get(h); !ok || got != k {
			t.Fatalf("hash %x: %x %v, want %x", h, got, ok, k)
		}
	}
	n := 0
	rt.all(func(h uint64, k Key) {
		n++
		if want, ok := ref[h]; !ok || want != k {
			t.Fatalf("table has %x -> %x, reference %x %v", h, k, want, ok)
		}
	})
	if n != len(ref) {
		t.Fatalf("all visited %d, want %d", n, len(ref))
	}
}

// runRevOps applies puts, deletes and filters to a revTable and a map.
// Hashes come from a small set including 0 and multiples of a large power
// of two, which a table indexed by low bits alone would pile into one slot.
func runRevOps(t *testing.T, ops []byte) {
	var rt revTable
	ref := map[uint64]Key{}
	for i := 0; i+1 < len(ops); i += 2 {
		h := uint64(ops[i+1]&63) << (16 * (ops[i+1] >> 6))
		switch ops[i] % 5 {
		case 0, 1:
			rt.delete(h)
			delete(ref, h)
		case 4:
			odd := func(_ uint64, k Key) bool { return k%2 == 1 }
			rt.keepIf(odd)
			for x, k := range ref {
				if !odd(x, k) {
					delete(ref, x)
				}
			}
		default:
			rt.put(h, Key(i))
			ref[h] = Key(i)
		}
		checkRev(t, &rt, ref)
	}
}

func TestRevTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	random := make([]byte, 4000)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	tests := []struct {
		name string
		ops  []byte
	}{
		{"empty", nil},
		{"hash zero", []byte{2, 0, 0, 0}},
		{"put, overwrite, delete", []byte{2, 9, 3, 9, 0, 9}},
		{"keep odd keys", []byte{2, 1, 3, 2, 2, 3, 4, 0}},
		{"random stream", random},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { runRevOps(t, tt.ops) })
	}
}

// FuzzRevTable checks the table against a map on arbitrary op streams.
func FuzzRevTable(f *testing.F) {
	f.Add([]byte{2, 0, 0, 0})
	f.Add([]byte{2, 9, 3, 9, 0, 9})
	f.Add([]byte{2, 1, 3, 2, 2, 3, 4, 0, 2, 65, 2, 129, 1, 1})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 1000 {
			ops = ops[:1000]
		}
		runRevOps(t, ops)
	})
}
