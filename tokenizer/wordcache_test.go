package tokenizer

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestWordCacheEntries stores pieces on both sides of the inline limits and
// reads them back: a hit returns exactly the stored ids, a piece that only
// shares a prefix, a length or the slot misses, and the cached copy does not
// alias the caller's buffers.
func TestWordCacheEntries(t *testing.T) {
	long := strings.Repeat("x", inlineWordBytes+1)
	edge := strings.Repeat("y", inlineWordBytes)
	tests := []struct {
		name string
		word string
		ids  []uint32
	}{
		{"short, one id", "the", []uint32{1782}},
		{"inline limits exactly", edge, []uint32{1, 2, 3, 4}},
		{"too many ids for inline", "abcdef", []uint32{1, 2, 3, 4, 5}},
		{"too long for inline", long, []uint32{9}},
		{"long and many ids", long + "z", []uint32{5, 6, 7, 8, 9, 10}},
		{"non-ASCII", " naïve", []uint32{4317, 2}},
	}
	stored := map[string]bool{}
	for _, tt := range tests {
		stored[tt.word] = true
	}
	c := newWordCache()
	for _, tt := range tests {
		buf := []byte(tt.word)
		ids := slices.Clone(tt.ids)
		c.store(string(buf), ids)
		ids[0] = 0 // the cache holds a copy
		got, ok := c.appendHit([]uint32{7}, tt.word)
		if !ok || !slices.Equal(got, append([]uint32{7}, tt.ids...)) {
			t.Fatalf("%s: appendHit(%q) = %v, %v; want [7 %v], true", tt.name, tt.word, got, ok, tt.ids)
		}
		for _, miss := range []string{tt.word[:len(tt.word)-1], tt.word + "s", strings.ToUpper(tt.word[:1]) + tt.word[1:]} {
			if stored[miss] {
				continue
			}
			if got, ok := c.appendHit(nil, miss); ok {
				t.Fatalf("%s: appendHit(%q) hit with %v", tt.name, miss, got)
			}
		}
	}
}

// TestCachedWordIs compares inline and outlined entries with near misses.
func TestCachedWordIs(t *testing.T) {
	for _, w := range []string{"ab", strings.Repeat("q", inlineWordBytes), strings.Repeat("q", inlineWordBytes+5)} {
		e := newCachedWord(w, []uint32{1})
		if !e.is(w) {
			t.Fatalf("entry of %q does not match itself", w)
		}
		for _, o := range []string{w[:len(w)-1], w + "q", "b" + w[1:], ""} {
			if e.is(o) {
				t.Fatalf("entry of %q matches %q", w, o)
			}
		}
	}
}

// TestWordCacheSpread stores about 17,700 distinct pieces of every length
// class the short hash treats apart (2-3, 4-7, 8-16 bytes, and longer) into
// the 32,768 two-way sets: a uniform hash keeps 96.3 % of them (Poisson
// arrivals at 0.54 per set overflow by 3.7 %), one that clusters them
// leaves many more out, since a piece whose two slots are taken is never
// cached.
func TestWordCacheSpread(t *testing.T) {
	c := newWordCache()
	var words []string
	for i := range 20000 {
		var w string
		switch i % 4 {
		case 0:
			w = string([]byte{byte('a' + i%26), byte('a' + i/26%26), byte(' ' + i/676%64)})[:2+i/4%2]
		case 1:
			w = fmt.Sprintf(" w%d", i)
		case 2:
			w = fmt.Sprintf(" token%08d", i)
		default:
			w = fmt.Sprintf(" a-much-longer-piece-%d", i)
		}
		words = append(words, w)
	}
	seen := map[string]bool{}
	for _, w := range words {
		if !seen[w] {
			seen[w] = true
			c.store(w, []uint32{uint32(len(w))})
		}
	}
	kept := 0
	for w := range seen {
		if got, ok := c.appendHit(nil, w); ok {
			if got[0] != uint32(len(w)) {
				t.Fatalf("%q: hit with %v", w, got)
			}
			kept++
		}
	}
	if kept < len(seen)*95/100 {
		t.Fatalf("cached %d of %d distinct pieces, want at least 95 %%", kept, len(seen))
	}
}

// TestSingleByteTable checks that every one-byte word, for every family,
// encodes through the table exactly as through encodeWord (and that the
// table is in use for the ASCII bytes of byte-level models).
func TestSingleByteTable(t *testing.T) {
	for _, fam := range families {
		m := loadFamily(t, fam).model
		used := 0
		for b := range 256 {
			w := string([]byte{byte(b)})
			var sc bpeScratch
			want, werr := m.encodeWord(nil, w, &sc, false)
			got, gerr := m.appendWord(nil, w, &sc)
			if (werr == nil) != (gerr == nil) || !slices.Equal(got, want) {
				t.Fatalf("%s: byte 0x%02x: appendWord %v (%v), encodeWord %v (%v)", fam, b, got, gerr, want, werr)
			}
			if m.single[b] != noToken {
				used++
			}
		}
		if m.byteLevel && used < 128 {
			t.Fatalf("%s: %d single-byte entries, want at least the 128 ASCII bytes", fam, used)
		}
	}
}
