package tokenizer

import (
	"slices"
	"testing"

	"github.com/warmroute/warmroute/tokenizer/tokenizertest"
)

// loadGolden returns testdata/golden.json.gz, written by
// testdata/gen_golden.py from the reference Rust implementation.
func loadGolden(t testing.TB) *tokenizertest.Golden {
	t.Helper()
	return tokenizertest.LoadGolden(t)
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
