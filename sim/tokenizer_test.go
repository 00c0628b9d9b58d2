package sim

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// pieces splits text the way WordTokenizer does, to test the boundaries
// rather than opaque ids.
func pieces(text string) []string {
	var out []string
	for len(text) > 0 {
		n := nextPiece(text)
		out = append(out, text[:n])
		text = text[n:]
	}
	return out
}

var tokenizerTests = []struct {
	name string
	text string
	want []string
}{
	{"empty", "", nil},
	{"one word", "hello", []string{"hello"}},
	{"space glued to word", "hello world", []string{"hello", " world"}},
	{"punctuation alone", "hi, there!", []string{"hi", ",", " there", "!"}},
	{"whitespace run", "a  \n b", []string{"a", "  \n", " b"}},
	{"long word split", "internationalization", []string{"internat", "ionaliza", "tion"}},
	{"leading space long word", " abcdefghij", []string{" abcdefgh", "ij"}},
	{"digits are word runes", "gpt4o 2024", []string{"gpt4o", " 2024"}},
	{"multibyte letters", "héllo wörld", []string{"héllo", " wörld"}},
	{"invalid utf8 byte by byte", "a\xff\xfeb", []string{"a", "\xff", "\xfe", "b"}},
	{"trailing space", "end ", []string{"end", " "}},
}

func TestWordTokenizerPieces(t *testing.T) {
	for _, tt := range tokenizerTests {
		t.Run(tt.name, func(t *testing.T) {
			got := pieces(tt.text)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Fatalf("pieces(%q) = %q, want %q", tt.text, got, tt.want)
			}
			ids := WordTokenizer{}.Encode(tt.text)
			if len(ids) != len(tt.want) {
				t.Fatalf("Encode(%q) has %d ids, want %d", tt.text, len(ids), len(tt.want))
			}
			for i, p := range tt.want {
				if ids[i] != pieceID(p) {
					t.Errorf("id %d = %d, want pieceID(%q) = %d", i, ids[i], p, pieceID(p))
				}
			}
		})
	}
}

func TestWordTokenizerDeterministicAndDistinct(t *testing.T) {
	a := WordTokenizer{}.Encode("the quick brown fox")
	b := WordTokenizer{}.Encode("the quick brown fox")
	c := WordTokenizer{}.Encode("the quick brown cat")
	if !equalInts(a, b) {
		t.Fatalf("same text encoded differently: %v vs %v", a, b)
	}
	if equalInts(a, c) {
		t.Fatalf("different text encoded the same: %v", a)
	}
	if !equalInts(a[:3], c[:3]) {
		t.Fatalf("shared prefix not shared in ids: %v vs %v", a, c)
	}
}

func FuzzWordTokenizer(f *testing.F) {
	for _, tt := range tokenizerTests {
		f.Add(tt.text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		ids := WordTokenizer{}.Encode(text)
		if strings.Join(pieces(text), "") != text {
			t.Fatalf("pieces of %q do not reassemble it", text)
		}
		if len(ids) > len(text) || (len(text) > 0 && len(ids) == 0) {
			t.Fatalf("%d ids for %d bytes", len(ids), len(text))
		}
		for _, id := range ids {
			if id < 0 || id >= wordVocabSize {
				t.Fatalf("id %d out of vocabulary", id)
			}
		}
		if utf8.ValidString(text) && len(text) > 0 && len(ids) > utf8.RuneCountInString(text) {
			t.Fatalf("more tokens than runes for %q", text)
		}
	})
}

func BenchmarkWordTokenizer(b *testing.B) {
	for _, words := range []int{100, 1000, 10000} {
		text := strings.Repeat("the prefix cache holds warm blocks, ", words/6+1)
		b.Run(sizeName(words), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				WordTokenizer{}.Encode(text)
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
