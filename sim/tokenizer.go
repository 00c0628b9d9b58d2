package sim

import (
	"unicode"
	"unicode/utf8"
)

// Tokenizer turns text into token ids. It is the seam where the project's real
// tokenizer replaces WordTokenizer; implementations must be deterministic and
// safe for concurrent use.
type Tokenizer interface {
	Encode(text string) []int
}

// WordTokenizer is a deterministic stand-in tokenizer: a token is a run of
// letters and digits (with at most one leading space, as BPE vocabularies
// glue it to the word), a run of other whitespace, or one other rune; runs
// longer than maxPieceBytes are split so long words cost several tokens, as
// they do in real vocabularies. Ids are a hash of the piece modulo
// wordVocabSize.
//
// The zero value is ready to use and safe for concurrent use.
type WordTokenizer struct{}

const (
	wordVocabSize = 50000
	maxPieceBytes = 8
)

// Encode returns the token ids of text. Invalid UTF-8 bytes become one token
// each, so every input terminates.
func (WordTokenizer) Encode(text string) []int {
	ids := make([]int, 0, len(text)/4+1)
	for len(text) > 0 {
		n := nextPiece(text)
		ids = append(ids, pieceID(text[:n]))
		text = text[n:]
	}
	return ids
}

type runeClass int

const (
	classWord runeClass = iota
	classSpace
	classOther
)

func classOf(r rune) runeClass {
	if r < utf8.RuneSelf {
		return asciiClass[r]
	}
	switch {
	case r == utf8.RuneError:
		return classOther
	case unicode.IsLetter(r) || unicode.IsDigit(r):
		return classWord
	case unicode.IsSpace(r):
		return classSpace
	}
	return classOther
}

// asciiClass spares the common case the unicode tables.
var asciiClass = func() (t [utf8.RuneSelf]runeClass) {
	for r := range t {
		switch c := rune(r); {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
			t[r] = classWord
		case c == ' ', c == '\t', c == '\n', c == '\v', c == '\f', c == '\r':
			t[r] = classSpace
		default:
			t[r] = classOther
		}
	}
	return t
}()

// nextPiece returns the byte length of the first token of the non-empty s.
func nextPiece(s string) int {
	start := 0
	if spaceBeforeWord(s) {
		start = 1
	}
	r, n := utf8.DecodeRuneInString(s[start:])
	class := classOf(r)
	end := start + n
	if class == classOther {
		return end
	}
	for end < len(s) {
		r, n := utf8.DecodeRuneInString(s[end:])
		if classOf(r) != class || end+n-start > maxPieceBytes || spaceBeforeWord(s[end:]) {
			break
		}
		end += n
	}
	return end
}

// spaceBeforeWord reports whether s starts with a space that the next piece
// glues to its word.
func spaceBeforeWord(s string) bool {
	if len(s) < 2 || s[0] != ' ' {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s[1:])
	return classOf(r) == classWord
}

func pieceID(piece string) int {
	// Inline FNV-1a: hash/fnv would allocate per token on this hot path.
	h := uint32(2166136261)
	for i := 0; i < len(piece); i++ {
		h ^= uint32(piece[i])
		h *= 16777619
	}
	return int(h % wordVocabSize)
}
