package index

import (
	"encoding/binary"
	"slices"
	"testing"
)

// FuzzIndexOps drives the index and the reference model with arbitrary
// operation streams; any disagreement, panic or hang is a bug.
func FuzzIndexOps(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 1, 0, 3, 1})                   // store a chain start
	f.Add([]byte{0, 0, 0, 1, 2, 1, 0, 0, 0, 1, 1, 1, 0}) // store then remove
	f.Add([]byte{0, 0, 4, 1, 5, 7, 0, 0, 5, 200, 0, 0, 0, 1, 0, 3, 0})
	f.Add([]byte{1, 1, 0, 2, 0, 2, 1, 0, 0, 1, 0, 2, 1, 1, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 2000 {
			data = data[:2000]
		}
		runOps(t, data)
	})
}

// FuzzAppendKeys checks keying invariants on arbitrary token streams: the
// tail is never keyed, keys of a prefix are a prefix of the keys, and bad
// input is an error, not a panic.
func FuzzAppendKeys(f *testing.F) {
	f.Add([]byte{}, 16, "m", "")
	f.Add(make([]byte, 8*17), 16, "llama", "salt")
	f.Add([]byte{255, 255, 255, 255, 255, 255, 255, 255}, 1, "", "")
	f.Add(make([]byte, 64), 0, "m", "")
	f.Fuzz(func(t *testing.T, raw []byte, bs int, model, salt string) {
		toks := make([]int64, len(raw)/8)
		for i := range toks {
			toks[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
		}
		id := Identity{Model: model, CacheSalt: salt}
		keys, err := AppendKeys(nil, id, bs, toks)
		if err != nil {
			return
		}
		if want := len(toks) / bs; len(keys) != want {
			t.Fatalf("%d keys for %d tokens at block size %d", len(keys), len(toks), bs)
		}
		if len(keys) > 0 {
			head, err := AppendKeys(nil, id, bs, toks[:bs*(len(keys)-1)])
			if err != nil || !slices.Equal(head, keys[:len(keys)-1]) {
				t.Fatalf("keys of a prefix are not a prefix of the keys: %v", err)
			}
		}
	})
}
