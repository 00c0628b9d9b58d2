package tokenizer

import (
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
