package tokenizer_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/warmroute/warmroute/tokenizer"
	"github.com/warmroute/warmroute/tokenizer/tokenizertest"
)

// randomWord is n random lowercase letters: one pre-tokenizer word.
func randomWord(r *rand.Rand, n int) string {
	var sb strings.Builder
	for range n {
		sb.WriteByte(byte('a' + r.IntN(26)))
	}
	return sb.String()
}

func TestLongWordsBound(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	long := func(words, size int) string {
		parts := make([]string, words)
		for i := range parts {
			parts[i] = randomWord(r, size)
		}
		return strings.Join(parts, " ")
	}
	tests := []struct {
		name    string
		text    string
		refused bool
	}{
		{"prose far beyond the bound", strings.Repeat("the quick brown fox jumps over the lazy dog. ", 12_000), false},
		// A word's pieces carry its leading space (up to 3 bytes once mapped).
		{"long words up to the bound", long(tokenizer.MaxLongWordBytes/4100, 4096), false},
		{"long words beyond the bound", long(tokenizer.MaxLongWordBytes/4096+1, 4096), true},
		{"one word beyond the bound", randomWord(r, tokenizer.MaxLongWordBytes+1), true},
		{"words just under long do not count", long(tokenizer.MaxLongWordBytes/(tokenizer.LongWordBytes-4)+10, tokenizer.LongWordBytes-4), false},
	}
	for _, family := range []string{"llama3", "gemma3"} {
		tk, err := tokenizer.LoadDir(tokenizertest.Dir(t, family))
		if err != nil {
			t.Fatal(err)
		}
		pc := tokenizer.NewPrefixCache(tk, 1<<20)
		for _, tt := range tests {
			t.Run(family+"/"+tt.name, func(t *testing.T) {
				ids, err := tk.Encode(tt.text, false)
				_, perr := pc.Encode(tt.text, false)
				for what, err := range map[string]error{"Encode": err, "PrefixCache.Encode": perr} {
					if got := errors.Is(err, tokenizer.ErrLongWords); got != tt.refused {
						t.Errorf("%s refused = %v (%v), want %v", what, got, err, tt.refused)
					}
				}
				if !tt.refused && len(ids) == 0 {
					t.Error("no ids for accepted text")
				}
			})
		}
	}
}
