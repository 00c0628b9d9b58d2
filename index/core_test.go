package index

import (
	"slices"
	"testing"
)

// checkHolders checks that key's slot holds exactly want (in any order),
// compactly (in[1] only after in[0], overflow only after both), and that
// nothing else in c claims key.
func checkHolders(t *testing.T, c *core, key Key, want []holderID) {
	t.Helper()
	s := c.keys.slot(key)
	if len(want) == 0 {
		if s != nil {
			t.Fatalf("key still in the table with in=%+v overflow=%d", s.in, overflowOf(s))
		}
		return
	}
	if s == nil {
		t.Fatalf("key missing, want holders %v", want)
	}
	var got []holderID
	for j := range s.in {
		if s.in[j].h != 0 {
			if j == 1 && s.in[0].h == 0 {
				t.Fatalf("in[1] used while in[0] is free: %+v", s.in)
			}
			got = append(got, s.in[j].holder())
		}
	}
	if overflowOf(s) != 0 && (s.in[0].h == 0 || s.in[1].h == 0) {
		t.Fatalf("overflow list while an inline place is free: %+v", s.in)
	}
	for i := overflowOf(s); i != 0; i = c.at(i).next {
		got = append(got, c.at(i).holder)
	}
	slices.Sort(got)
	w := slices.Clone(want)
	slices.Sort(w)
	if !slices.Equal(got, w) {
		t.Fatalf("holders %v, want %v", got, w)
	}
	for _, h := range w {
		if !c.holds(key, h) || !c.holdsOn(key, h, MediumGPU) {
			t.Fatalf("holds(%d) false for a holder", h)
		}
	}
	if c.holds(key, makeHolder(99, 0)) {
		t.Fatal("holds true for a holder never added")
	}
}

// TestCoreInlineHolders adds up to five holders to one key (two inline, the
// rest in the slab) and removes them in different orders, checking after
// every step which holders the key has and that the slot stays compact;
// slab entries freed are reused.
func TestCoreInlineHolders(t *testing.T) {
	hs := []holderID{makeHolder(0, 0), makeHolder(0, 1), makeHolder(3, 0), makeHolder(7, 2), makeHolder(maxEndpoints-1, MaxRank)}
	tests := []struct {
		name  string
		n     int
		order []int // indexes into hs, the order of removal
	}{
		{"one", 1, []int{0}},
		{"two, first out first", 2, []int{0, 1}},
		{"two, second out first", 2, []int{1, 0}},
		{"three, inline out first", 3, []int{0, 1, 2}},
		{"three, overflow out first", 3, []int{2, 1, 0}},
		{"five, middle of the list first", 5, []int{3, 0, 4, 1, 2}},
		{"five, head of the list first", 5, []int{4, 3, 2, 1, 0}},
		{"five, inline first", 5, []int{1, 0, 2, 3, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCore(func(holderID) {})
			const key = Key(0x1234_5678_9abc_def1)
			for i, h := range hs[:tt.n] {
				if !c.add(key, h, MediumGPU, 1) {
					t.Fatalf("add of holder %d reported an existing entry", i)
				}
				if c.add(key, h, MediumCPU, 1) {
					t.Fatalf("second add of holder %d reported a new entry", i)
				}
				checkHolders(t, &c, key, hs[:i+1])
			}
			if c.nEntries != tt.n {
				t.Fatalf("nEntries %d, want %d", c.nEntries, tt.n)
			}
			left := slices.Clone(hs[:tt.n])
			for _, r := range tt.order {
				if found, gone := c.remove(key, hs[r], MediumCPU); !found || gone {
					t.Fatalf("remove of one of two copies: found %v gone %v", found, gone)
				}
				if found, gone := c.remove(key, hs[r], MediumCPU); found || gone {
					t.Fatalf("remove of a copy on a medium with none: found %v gone %v", found, gone)
				}
				if found, gone := c.remove(key, hs[r], MediumGPU); !found || !gone {
					t.Fatalf("remove of the last copy: found %v gone %v", found, gone)
				}
				left = slices.DeleteFunc(left, func(h holderID) bool { return h == hs[r] })
				checkHolders(t, &c, key, left)
				if c.nEntries != len(left) {
					t.Fatalf("nEntries %d, want %d", c.nEntries, len(left))
				}
			}
			size := c.size
			for _, h := range hs[:tt.n] {
				c.add(key, h, MediumGPU, 2)
			}
			if c.size != size {
				t.Fatalf("slab grew from %d to %d entries re-adding freed holders", size, c.size)
			}
		})
	}
}

// TestCoreDropAndEvict: drop removes one holder whatever its counts, and
// evicting a key tells evictFn about every holder, inline and overflow.
func TestCoreDropAndEvict(t *testing.T) {
	var evicted []holderID
	c := newCore(func(h holderID) { evicted = append(evicted, h) })
	const key, other = Key(0xfeed_0000_0000_0001), Key(0xfeed_0000_0000_0002)
	hs := []holderID{makeHolder(1, 0), makeHolder(2, 0), makeHolder(3, 0), makeHolder(4, 0)}
	for _, h := range hs {
		c.add(key, h, MediumGPU, 1)
		c.add(key, h, MediumGPU, 1)
	}
	c.add(other, hs[0], MediumGPU, 1)
	if c.drop(key, makeHolder(9, 0)) {
		t.Fatal("drop of a holder without an entry reported one")
	}
	if !c.drop(key, hs[1]) {
		t.Fatal("drop of an inline holder with two copies reported none")
	}
	checkHolders(t, &c, key, []holderID{hs[0], hs[2], hs[3]})
	var pend pending
	c.evictKey(key, 0, &pend)
	slices.Sort(evicted)
	if want := []holderID{hs[0], hs[2], hs[3]}; !slices.Equal(evicted, want) {
		t.Fatalf("evicted holders %v, want %v", evicted, want)
	}
	checkHolders(t, &c, key, nil)
	checkHolders(t, &c, other, []holderID{hs[0]})
	if c.nEntries != 1 || c.keys.len() != 1 {
		t.Fatalf("nEntries %d keys %d after eviction, want 1 and 1", c.nEntries, c.keys.len())
	}
}
