package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// wordStart is the SentencePiece word marker. Models whose normalizer turns
// spaces into it without a splitting pre-tokenizer (Gemma 3) hand the model
// whole text segments as one word.
const wordStart = "▁"

// wordSplitter finds the places in a SentencePiece-style word where no merge
// can ever cross: before a "▁" whose preceding character x is a
// single-character token and no vocabulary string contains x followed by
// "▁". Every merged symbol's string is the concatenation of the strings of
// the symbols it covers, so a symbol spanning such a place would contain
// "x▁", which no token does. The candidate merges on either side are then
// disjoint, and each side merges in the same order alone as in the whole
// word (lowest rank first, leftmost among equals), so encoding the pieces
// separately gives exactly the same ids.
//
// The zero value splits nothing.
type wordSplitter struct {
	on      bool
	blocked map[rune]bool // x such that some token contains "x▁"
	ascii   [utf8.RuneSelf]bool
}

// newWordSplitter derives the split rule from the vocabulary (keyed by the
// strings encoding looks up). It is off unless "▁" is itself a token.
func newWordSplitter(vocab map[string]uint32) wordSplitter {
	if _, ok := vocab[wordStart]; !ok {
		return wordSplitter{}
	}
	ws := wordSplitter{on: true, blocked: map[rune]bool{}}
	for s := range vocab {
		for i := strings.Index(s, wordStart); i >= 0; {
			if i > 0 {
				if x, _ := utf8.DecodeLastRuneInString(s[:i]); x != '▁' {
					ws.blocked[x] = true
				}
			}
			next := strings.Index(s[i+len(wordStart):], wordStart)
			if next < 0 {
				break
			}
			i += len(wordStart) + next
		}
	}
	for b := 0; b < utf8.RuneSelf; b++ {
		_, inVocab := vocab[string(rune(b))]
		ws.ascii[b] = inVocab && !ws.blocked[rune(b)]
	}
	return ws
}

// cut returns the length of the first piece of word: the first safe place
// after its start, or len(word).
func (ws *wordSplitter) cut(word string, vocab map[string]uint32) int {
	from := 1
	for from < len(word) {
		i := strings.Index(word[from:], wordStart)
		if i < 0 {
			return len(word)
		}
		at := from + i
		if ws.safeBefore(word[:at], vocab) {
			return at
		}
		from = at + len(wordStart)
	}
	return len(word)
}

// safeBefore reports whether a piece may end after head, which is followed
// by "▁".
func (ws *wordSplitter) safeBefore(head string, vocab map[string]uint32) bool {
	x, n := utf8.DecodeLastRuneInString(head)
	if x < utf8.RuneSelf {
		return ws.ascii[x]
	}
	if x == '▁' || ws.blocked[x] {
		return false
	}
	_, inVocab := vocab[head[len(head)-n:]]
	return inVocab
}
