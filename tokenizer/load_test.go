package tokenizer

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// tinyModel is a byte-level BPE with the full byte alphabet and one merge.
func tinyModel(pre, extra string) string {
	var vocab []string
	for b := 0; b < 256; b++ {
		vocab = append(vocab, quoteJSON(string(byteToRune[b]))+":"+strconv.Itoa(b))
	}
	vocab = append(vocab, `"ab":256`)
	return `{"added_tokens":[{"id":257,"content":"<s>","special":true}],` +
		`"pre_tokenizer":` + pre + `,` + extra +
		`"model":{"type":"BPE","vocab":{` + strings.Join(vocab, ",") + `},"merges":["a b"]}}`
}

func quoteJSON(s string) string {
	if s == `"` || s == `\` {
		return `"\` + s + `"`
	}
	return `"` + s + `"`
}

const byteLevelPre = `{"type":"ByteLevel","add_prefix_space":false,"use_regex":false}`

var loadErrorCases = []struct {
	name string
	json string
	want error
}{
	{"not json", `{`, ErrMalformed},
	{"unknown regex", tinyModel(`{"type":"Split","pattern":{"Regex":"\\w+"},"behavior":"Isolated"}`, ""), ErrUnsupported},
	{"unknown pre-tokenizer", tinyModel(`{"type":"Whitespace"}`, ""), ErrUnsupported},
	{"unknown normalizer", tinyModel(byteLevelPre, `"normalizer":{"type":"Lowercase"},`), ErrUnsupported},
	{"regex replace", tinyModel(byteLevelPre, `"normalizer":{"type":"Replace","pattern":{"Regex":" +"},"content":" "},`), ErrUnsupported},
	{"unknown post-processor", tinyModel(byteLevelPre, `"post_processor":{"type":"BertProcessing"},`), ErrUnsupported},
	{"unigram model", `{"model":{"type":"Unigram","vocab":{}}}`, ErrUnsupported},
	{"merge outside vocab", `{"model":{"type":"BPE","vocab":{"a":0},"merges":["a z"]}}`, ErrMalformed},
	{"bad merge", `{"model":{"type":"BPE","vocab":{"a":0},"merges":["abc"]}}`, ErrMalformed},
	{"unk not in vocab", `{"model":{"type":"BPE","vocab":{"a":0},"merges":[],"unk_token":"<unk>"}}`, ErrMalformed},
	{"prefix space", tinyModel(`{"type":"ByteLevel","add_prefix_space":true,"use_regex":false}`, ""), ErrUnsupported},
}

func TestLoadErrors(t *testing.T) {
	for _, tc := range loadErrorCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load([]byte(tc.json))
			if !errors.Is(err, tc.want) {
				t.Fatalf("Load error = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestTinyModel(t *testing.T) {
	tk, err := Load([]byte(tinyModel(byteLevelPre, "")))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		text string
		want []uint32
	}{
		{"merge", "ab", []uint32{256}},
		{"no merge", "ba", []uint32{'b', 'a'}},
		{"added token", "a<s>b", []uint32{'a', 257, 'b'}},
		{"empty", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tk.Encode(tc.text, false)
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("Encode(%q) = %v, %v; want %v", tc.text, got, err, tc.want)
			}
		})
	}
	if _, err := tk.Encode("\xff", false); !errors.Is(err, ErrInvalidUTF8) {
		t.Fatalf("invalid UTF-8: err = %v", err)
	}
}

func TestGoldenDecode(t *testing.T) {
	g := loadGolden(t)
	for _, fam := range families {
		t.Run(fam, func(t *testing.T) {
			tk := loadFamily(t, fam)
			want := g.Families[fam]
			for i, ids := range want.Plain {
				got, err := tk.Decode(ids, false)
				if err != nil || got != want.Decoded[i] {
					t.Fatalf("Decode(%v) = %q, %v; want %q", ids, got, err, want.Decoded[i])
				}
			}
		})
	}
}
