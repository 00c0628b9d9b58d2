package index

import "testing"

// TestLookupNameCache checks that reusing a resolved candidate list never
// carries an endpoint id to the wrong index or keeps a name unknown after it
// was interned.
func TestLookupNameCache(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, names []string)
	}{
		{"two indexes interning in opposite orders", func(t *testing.T, names []string) {
			a, b := newFixture(t, Options{}), newFixture(t, Options{})
			a.store(t, names[0], 0, 1, 0, 3, MediumGPU)
			a.store(t, names[1], 0, 2, 0, 3, MediumGPU)
			b.store(t, names[1], 0, 1, 0, 3, MediumGPU)
			b.store(t, names[0], 0, 2, 0, 3, MediumGPU)
			for range 3 { // the same walk is likely reused from the pool
				if m := a.ix.Lookup(keysOf(t, 1, 3), names, nil); m[0].Confirmed != 3 || m[1].Confirmed != 0 {
					t.Fatalf("index a: %+v, want only %s", m, names[0])
				}
				if m := b.ix.Lookup(keysOf(t, 1, 3), names, nil); m[0].Confirmed != 0 || m[1].Confirmed != 3 {
					t.Fatalf("index b: %+v, want only %s", m, names[1])
				}
			}
		}},
		{"name interned after a lookup", func(t *testing.T, names []string) {
			f := newFixture(t, Options{})
			f.store(t, names[0], 0, 2, 0, 3, MediumGPU)
			if m := f.ix.Lookup(keysOf(t, 1, 3), names, nil); m[1].Confirmed != 0 {
				t.Fatalf("unknown endpoint matched: %+v", m)
			}
			f.store(t, names[1], 0, 1, 0, 3, MediumGPU)
			if m := f.ix.Lookup(keysOf(t, 1, 3), names, nil); m[1].Confirmed != 3 {
				t.Fatalf("endpoint interned since the last lookup: %+v, want 3 confirmed", m)
			}
		}},
		{"same position, other name", func(t *testing.T, names []string) {
			f := newFixture(t, Options{})
			f.store(t, names[0], 0, 1, 0, 3, MediumGPU)
			f.store(t, names[1], 0, 2, 0, 3, MediumGPU)
			f.ix.Lookup(keysOf(t, 1, 3), names, nil)
			swapped := []string{names[1], names[0]}
			if m := f.ix.Lookup(keysOf(t, 1, 3), swapped, nil); m[0].Confirmed != 0 || m[1].Confirmed != 3 {
				t.Fatalf("swapped candidates: %+v, want the second to hold 3", m)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, []string{"10.9.0.1:8000", "10.9.0.2:8000"}) })
	}
}
