package tokenizer

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"slices"
	"sync"
	"testing"
)

// golden is testdata/golden.json.gz, written by testdata/gen_golden.py from
// the reference Rust implementation.
type golden struct {
	Version  string   `json:"tokenizers_version"`
	Texts    []string `json:"texts"`
	Families map[string]struct {
		Plain   [][]uint32 `json:"plain"`
		Special [][]uint32 `json:"special"`
		Decoded []string   `json:"decoded"`
	} `json:"families"`
}

var goldenOnce = sync.OnceValues(func() (*golden, error) {
	f, err := os.Open("testdata/golden.json.gz")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	var g golden
	return &g, json.NewDecoder(zr).Decode(&g)
})

func loadGolden(t testing.TB) *golden {
	t.Helper()
	g, err := goldenOnce()
	if err != nil {
		t.Fatalf("reading golden vectors: %v", err)
	}
	return g
}

func TestGoldenEncode(t *testing.T) {
	g := loadGolden(t)
	for _, fam := range families {
		t.Run(fam, func(t *testing.T) {
			tk := loadFamily(t, fam)
			want, ok := g.Families[fam]
			if !ok {
				t.Fatalf("no golden vectors for %s", fam)
			}
			mismatches := 0
			for i, text := range g.Texts {
				mismatches += checkEncode(t, tk, text, false, want.Plain[i])
				mismatches += checkEncode(t, tk, text, true, want.Special[i])
				if mismatches > 10 {
					t.Fatalf("too many mismatches, stopping")
				}
			}
		})
	}
}

func checkEncode(t *testing.T, tk *Tokenizer, text string, special bool, want []uint32) int {
	t.Helper()
	got, err := tk.Encode(text, special)
	if err != nil {
		t.Errorf("Encode(%q, %v): %v", text, special, err)
		return 1
	}
	if !slices.Equal(got, want) {
		t.Errorf("Encode(%q, %v):\n got %v\nwant %v", text, special, got, want)
		return 1
	}
	return 0
}
