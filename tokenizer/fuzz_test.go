package tokenizer

import (
	"slices"
	"testing"
	"unicode/utf8"
)

// fuzzSeeds are the hand-written part of the golden corpus.
func fuzzSeeds(f *testing.F) {
	g := loadGolden(f)
	for _, s := range g.Texts[:120] {
		f.Add(s)
	}
}

// FuzzEncodeRoundTrip checks that byte-level models never fail or panic on
// valid UTF-8 and always decode back to the input.
func FuzzEncodeRoundTrip(f *testing.F) {
	fuzzSeeds(f)
	tks := []*Tokenizer{loadFamily(f, "llama3"), loadFamily(f, "qwen3"), loadFamily(f, "gptoss"), loadFamily(f, "deepseek_v3")}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			if _, err := tks[0].Encode(s, false); err == nil {
				t.Fatal("invalid UTF-8 accepted")
			}
			return
		}
		for _, tk := range tks {
			ids, err := tk.Encode(s, false)
			if err != nil {
				t.Fatalf("Encode(%q): %v", s, err)
			}
			// Normalizing models (Qwen's NFC) round-trip to the normal form.
			want := s
			if tk.norm != nil {
				want = tk.norm.normalize(s)
			}
			back, err := tk.Decode(ids, false)
			if err != nil || back != want {
				t.Fatalf("Decode(Encode(%q)) = %q, %v", s, back, err)
			}
		}
	})
}

// FuzzEncodeSentencePiece checks that byte-fallback models never fail or
// panic and that the prefix cache agrees with plain encoding.
func FuzzEncodeSentencePiece(f *testing.F) {
	fuzzSeeds(f)
	tks := []*Tokenizer{loadFamily(f, "gemma3"), loadFamily(f, "llama2")}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		for _, tk := range tks {
			if _, err := tk.Encode(s, true); err != nil {
				t.Fatalf("Encode(%q): %v", s, err)
			}
		}
	})
}

// FuzzLoad checks that arbitrary tokenizer.json input is rejected cleanly.
func FuzzLoad(f *testing.F) {
	for _, tc := range loadErrorCases {
		f.Add(tc.json)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tk, err := Load([]byte(s))
		if err == nil {
			tk.Encode("probe text <s> 123", true)
		}
	})
}

// TestIsolatedFastPath pins which families take encodeIsolated, so a change
// in pre-tokenizer building cannot turn the fast path off (or on for a
// pre-tokenizer it does not fit) unnoticed.
func TestIsolatedFastPath(t *testing.T) {
	want := map[string]bool{"llama3": true, "qwen3": true, "gptoss": true, "deepseek_v3": false, "gemma3": false}
	for fam, fast := range want {
		if got := loadFamily(t, fam).isolated != nil; got != fast {
			t.Errorf("%s: isolated fast path %v, want %v", fam, got, fast)
		}
	}
}

// FuzzIsolatedMatchesSpans compares encodeIsolated, the fast path of a
// single Isolated split, with the general span-list path on the same
// normalized text, for every family that takes it.
func FuzzIsolatedMatchesSpans(f *testing.F) {
	fuzzSeeds(f)
	for _, s := range []string{"", " ", "a", "  x  ", "it's 123456 東京\r\n\n  end ", "\u00a0\u3000tab\tend"} {
		f.Add(s)
	}
	var tks []*Tokenizer
	for _, fam := range families {
		if tk := loadFamily(f, fam); tk.isolated != nil {
			tks = append(tks, tk)
		}
	}
	if len(tks) == 0 {
		f.Fatal("no family takes the isolated fast path")
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		for _, tk := range tks {
			text := s
			if tk.norm != nil {
				text = tk.norm.normalize(s)
			}
			st := &encodeState{}
			fast, ferr := tk.encodeIsolated([]uint32{1}, text, tk.isolated, &st.scratch)
			slow, serr := tk.encodeSpans([]uint32{1}, text, &encodeState{})
			if (ferr == nil) != (serr == nil) || !slices.Equal(fast, slow) {
				t.Fatalf("%q: isolated %v (%v), spans %v (%v)", text, fast, ferr, slow, serr)
			}
		}
	})
}
