package tokenizer

import (
	"slices"
	"strings"
	"testing"
)

func TestWordSplitterCut(t *testing.T) {
	vocab := map[string]uint32{"▁": 0, "a": 1, "b": 2, ">": 3, "<": 4, "▁b": 5, ">▁<": 6, "▁▁": 7, "é": 8}
	ws := newWordSplitter(vocab)
	cases := []struct {
		name, word string
		want       int
	}{
		{"empty", "", 0},
		{"no marker", "ab", 2},
		{"marker at start only", "▁ab", len("▁ab")},
		{"after ascii token", "a▁b", 1},
		{"first safe place wins", "ab▁a▁b", 2},
		{"blocked by a token containing x▁", ">▁<", len(">▁<")},
		{"blocked then safe", ">▁a▁b", len(">▁a")},
		{"marker run stays whole", "▁▁a", len("▁▁a")},
		{"after a marker run", "▁▁a▁b", len("▁▁a")},
		{"non-ascii token before marker", "é▁b", len("é")},
		{"character outside the vocabulary", "ü▁b", len("ü▁b")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ws.cut(tc.word, vocab); got != tc.want {
				t.Fatalf("cut(%q) = %d, want %d", tc.word, got, tc.want)
			}
		})
	}
	t.Run("off without a marker token", func(t *testing.T) {
		if newWordSplitter(map[string]uint32{"a": 1}).on {
			t.Fatal("splitter on for a vocabulary without ▁")
		}
	})
}

// wholeWordModel returns tk's model without the word splitter and the rune
// table: the plain algorithm the fast paths must agree with.
func wholeWordModel(tk *Tokenizer) *bpe {
	m := *tk.model
	m.split, m.runeIDs, m.cache = wordSplitter{}, nil, nil
	return &m
}

// checkSplitAgrees encodes text as one word with and without the fast paths,
// and merges its first characters with both merge algorithms.
func checkSplitAgrees(t *testing.T, tk *Tokenizer, text string) {
	t.Helper()
	if tk.norm != nil {
		text = tk.norm.normalize(text)
	}
	var sc bpeScratch
	want, werr := wholeWordModel(tk).appendWord(nil, text, &sc)
	got, gerr := tk.model.appendWord(nil, text, &sc)
	if (werr == nil) != (gerr == nil) || !slices.Equal(got, want) {
		t.Fatalf("split encoding of %q differs from whole-word encoding", text)
	}
	head := []rune(text)
	head = head[:min(len(head), 120)]
	syms, err := tk.model.charSymbols(nil, string(head))
	if err != nil || len(syms) < 2 {
		return
	}
	naive := tk.model.mergeNaive(slices.Clone(syms), &sc)
	heap := tk.model.mergeHeap(slices.Clone(syms), &sc)
	if !slices.Equal(naive, heap) {
		t.Fatalf("naive and heap merges of %q differ", string(head))
	}
}

func TestSplitMatchesWholeWord(t *testing.T) {
	g := loadGolden(t)
	extra := []string{"a>▁</b", "<p> </p>", "  double  spaces ", "東京 café naïve", "\n\n▁ x"}
	for _, fam := range []string{"gemma3", "llama2"} {
		t.Run(fam, func(t *testing.T) {
			tk := loadFamily(t, fam)
			if !tk.model.split.on {
				t.Fatalf("%s: word splitter off", fam)
			}
			for _, s := range append(extra, g.Texts...) {
				checkSplitAgrees(t, tk, s)
			}
		})
	}
}

// FuzzWordSplit checks that splitting words, the rune table and the naive
// merge never change the ids of SentencePiece-style models.
func FuzzWordSplit(f *testing.F) {
	fuzzSeeds(f)
	for _, s := range []string{"a>▁</b", "<p> </p>", strings.Repeat("ab ", 40)} {
		f.Add(s)
	}
	tks := []*Tokenizer{loadFamily(f, "gemma3"), loadFamily(f, "llama2")}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tk := range tks {
			checkSplitAgrees(t, tk, strings.ToValidUTF8(s, "?"))
		}
	})
}
