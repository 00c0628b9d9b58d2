package index

import (
	"math/rand/v2"
	"testing"
)

// payload returns the part of a slot beyond its keySlot that tests fill, so
// that they check it moves with the key through shifts and growth; nil for
// a bare keySlot.
func payload[S slotType](s *S) *uint32 {
	if hs, ok := any(s).(*holderSlot); ok {
		return &hs.in[1].h
	}
	return nil
}

// checkTable compares t with the reference map and checks its invariants:
// every key is reachable from its home slot, carries its payload, and the
// count is right.
func checkTable[S slotType](t *testing.T, kt *keyTable[S], ref map[Key]uint32) {
	t.Helper()
	if kt.len() != len(ref) {
		t.Fatalf("table holds %d keys, reference %d", kt.len(), len(ref))
	}
	for k, h := range ref {
		if got := kt.head(k); got != h {
			t.Fatalf("key %x: head %d, want %d", k, got, h)
		}
		if p := payload(kt.slot(k)); p != nil && *p != ^h {
			t.Fatalf("key %x: payload %x, want %x", k, *p, ^h)
		}
	}
	n := 0
	kt.all(func(k Key, h uint32) {
		n++
		if ref[k] != h {
			t.Fatalf("table has key %x head %d, reference %d", k, h, ref[k])
		}
	})
	if n != len(ref) {
		t.Fatalf("all visited %d keys, want %d", n, len(ref))
	}
}

// runTableOps applies a stream of puts and removes to a keyTable and a map.
// Keys are drawn from a small range with few distinct low bits, so runs
// collide, wrap around the table's end and need backward shifts.
func runTableOps[S slotType](t *testing.T, ops []byte) {
	var kt keyTable[S]
	ref := map[Key]uint32{}
	for i := 0; i+1 < len(ops); i += 2 {
		// Low 3 bits choose the home slot region; the high bits make keys
		// distinct without spreading them.
		k := Key(ops[i+1]&7) | Key(ops[i+1]>>3)<<40
		if ops[i]&8 != 0 {
			k |= 0xfff8 // home in the table's last eight slots: runs wrap
		}
		if ops[i]%3 == 0 {
			kt.remove(k)
			delete(ref, k)
		} else {
			h := uint32(i + 1)
			if p := payload(kt.put(k, h, 0)); p != nil {
				*p = ^h
			}
			ref[k] = h
		}
		checkTable(t, &kt, ref)
	}
}

func TestKeyTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	random := make([]byte, 4000)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	tests := []struct {
		name string
		ops  []byte
	}{
		{"empty", nil},
		{"put then remove", []byte{1, 5, 0, 5}},
		{"remove absent", []byte{0, 9}},
		{"same home, remove first", []byte{1, 1, 1, 9, 1, 17, 0, 1}},
		{"update head", []byte{1, 3, 2, 3}},
		{"wrapping run, remove its start", []byte{8 + 1, 7, 8 + 1, 15, 8 + 1, 6, 1, 0, 8 + 3, 7}},
		{"random stream", random},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { runTableOps[keySlot](t, tt.ops) })
		t.Run(tt.name+"/holder slots", func(t *testing.T) { runTableOps[holderSlot](t, tt.ops) })
	}
}

func TestKeyTableSample(t *testing.T) {
	var kt keyTable[keySlot]
	for i := range 100 {
		kt.put(Key(i)*0x9e3779b97f4a7c15, uint32(i+1), uint32(i))
	}
	tests := []struct {
		name string
		n    int
		want int
	}{
		{"fewer than held", 8, 8},
		{"more than held", 500, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := map[Key]bool{}
			kt.sample(tt.n, func(s *keySlot) bool {
				if s.head == 0 || seen[s.key] {
					t.Fatalf("sampled a free or repeated slot %+v", *s)
				}
				seen[s.key] = true
				return true
			})
			if len(seen) != tt.want {
				t.Fatalf("sampled %d keys, want %d", len(seen), tt.want)
			}
		})
	}
}

// FuzzKeyTable checks the table against a map on arbitrary op streams.
func FuzzKeyTable(f *testing.F) {
	f.Add([]byte{1, 5, 0, 5})
	f.Add([]byte{1, 1, 1, 9, 1, 17, 0, 1})
	f.Add([]byte{1, 7, 1, 15, 1, 23, 1, 0, 0, 7, 0, 15})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 1000 {
			ops = ops[:1000]
		}
		runTableOps[keySlot](t, ops)
		runTableOps[holderSlot](t, ops)
	})
}

// TestFlatKeysReserve: reserve sizes for the larger of the keys coming and
// the keys held, never their sum, and then takes that many without growing.
func TestFlatKeysReserve(t *testing.T) {
	var ft flatKeys[keySlot]
	ft.reserve(1000)
	size := len(ft.slots)
	if size*maxLoadNum < 1000*maxLoadDen {
		t.Fatalf("%d slots do not hold 1000 keys", size)
	}
	for i := range 1000 {
		ft.put(Key(i*7919+1), 1, 0)
	}
	if len(ft.slots) != size {
		t.Fatalf("grew from %d to %d slots after reserving", size, len(ft.slots))
	}
	ft.reserve(1000) // the same keys again, say: no growth
	if len(ft.slots) != size {
		t.Fatalf("reserve of as many keys as held grew %d to %d slots", size, len(ft.slots))
	}
}
