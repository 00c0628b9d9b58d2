package index

import (
	"slices"
	"testing"
)

func TestAppendChainExtra(t *testing.T) {
	toks := make([]uint32, 64)
	for i := range toks {
		toks[i] = uint32(i)
	}
	root := Identity{Model: "m"}.Root()
	plain, err := AppendChain(nil, root, 16, toks)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		extra     []uint64
		wantSame  int // leading keys equal to the text chain's
		wantOther []uint64
	}{
		{name: "nil extra is the text chain", extra: nil, wantSame: 4},
		{name: "all zero is the text chain", extra: []uint64{0, 0, 0, 0}, wantSame: 4},
		{name: "media on block 1 changes it and every later key", extra: []uint64{0, 7, 0, 0}, wantSame: 1},
		{name: "short extra", extra: []uint64{9}, wantSame: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AppendChainExtra(nil, root, 16, toks, tt.extra)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 4 {
				t.Fatalf("got %d keys, want 4", len(got))
			}
			for i := range got {
				if same := got[i] == plain[i]; same != (i < tt.wantSame) {
					t.Errorf("key %d equal to the text key: %v, want %v", i, same, i < tt.wantSame)
				}
			}
		})
	}
	a, _ := AppendChainExtra(nil, root, 16, toks, []uint64{0, 7})
	b, _ := AppendChainExtra(nil, root, 16, toks, []uint64{0, 8})
	if slices.Equal(a[1:], b[1:]) {
		t.Error("two different media digests gave the same keys")
	}
	if _, err := AppendChainExtra(nil, root, 0, toks, []uint64{1}); err == nil {
		t.Error("block size 0 accepted")
	}
}
