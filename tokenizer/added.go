package tokenizer

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// addedToken is one entry of tokenizer.json "added_tokens".
type addedToken struct {
	ID         uint32 `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// trieNode is a byte trie node; tok is the index of the token ending here
// plus one (0: none). next is used while building; compact then moves the
// children into kids, indexed by byte minus lo (0: none, as the root is
// nobody's child), because a map lookup per byte dominated matching.
type trieNode struct {
	next map[byte]int32
	tok  int32
	lo   byte
	kids []int32
}

// addedMatcher finds added tokens in text with leftmost-longest semantics,
// the way the reference's Aho-Corasick automaton does.
type addedMatcher struct {
	nodes  []trieNode
	first  [256]bool
	tokens []addedToken
	// only is the first byte shared by every token, or -1. Most families'
	// tokens all start with '<', and a vectorised byte search then skips
	// the text between them.
	only int
}

func newAddedMatcher(tokens []addedToken) *addedMatcher {
	m := &addedMatcher{nodes: []trieNode{{}}, only: -1}
	for _, t := range tokens {
		if t.Content == "" {
			continue
		}
		m.insert(t)
	}
	m.compact()
	for b, ok := range m.first {
		switch {
		case !ok:
		case m.only == -1:
			m.only = b
		default:
			m.only = -2
		}
	}
	m.only = max(m.only, -1)
	return m
}

// nextCandidate returns the first index from i whose byte can start a
// token, or len(s).
func (m *addedMatcher) nextCandidate(s string, i int) int {
	if m.only >= 0 {
		if j := strings.IndexByte(s[i:], byte(m.only)); j >= 0 {
			return i + j
		}
		return len(s)
	}
	for i < len(s) && !m.first[s[i]] {
		i++
	}
	return i
}

func (m *addedMatcher) insert(t addedToken) {
	n := int32(0)
	for i := 0; i < len(t.Content); i++ {
		b := t.Content[i]
		if m.nodes[n].next == nil {
			m.nodes[n].next = map[byte]int32{}
		}
		c, ok := m.nodes[n].next[b]
		if !ok {
			c = int32(len(m.nodes))
			m.nodes = append(m.nodes, trieNode{})
			m.nodes[n].next[b] = c
		}
		n = c
	}
	if m.nodes[n].tok == 0 {
		m.tokens = append(m.tokens, t)
		m.nodes[n].tok = int32(len(m.tokens))
	}
	m.first[t.Content[0]] = true
}

// compact turns each node's child map into a dense range.
func (m *addedMatcher) compact() {
	for i := range m.nodes {
		nd := &m.nodes[i]
		if len(nd.next) == 0 {
			nd.next = nil
			continue
		}
		lo, hi := byte(255), byte(0)
		for b := range nd.next {
			lo, hi = min(lo, b), max(hi, b)
		}
		nd.lo, nd.kids = lo, make([]int32, int(hi-lo)+1)
		for b, c := range nd.next {
			nd.kids[b-lo] = c
		}
		nd.next = nil
	}
}

// longestAt returns the longest token starting at s[i].
func (m *addedMatcher) longestAt(s string, i int) (tok int32, end int) {
	n := int32(0)
	for j := i; j < len(s); j++ {
		nd := &m.nodes[n]
		k := int(s[j]) - int(nd.lo)
		if k < 0 || k >= len(nd.kids) || nd.kids[k] == 0 {
			break
		}
		n = nd.kids[k]
		if m.nodes[n].tok != 0 {
			tok, end = m.nodes[n].tok, j+1
		}
	}
	return tok, end
}

// segment is a piece of input: either an added token (id valid) or text.
type segment struct {
	start, end int
	id         uint32
	isToken    bool
}

// split cuts s into text and added-token segments, applying each token's
// single_word, lstrip and rstrip flags.
func (m *addedMatcher) split(s string, out []segment) []segment {
	if len(m.tokens) == 0 {
		return append(out, segment{start: 0, end: len(s)})
	}
	last := 0
	for i := m.nextCandidate(s, 0); i < len(s); i = m.nextCandidate(s, i+1) {
		tok, end := m.longestAt(s, i)
		if tok == 0 {
			continue
		}
		t := &m.tokens[tok-1]
		if t.SingleWord && !isSingleWord(s, i, end) {
			// The reference's automaton resumes after a rejected match.
			i = end - 1
			continue
		}
		start := i
		if t.LStrip {
			start = max(last, trimSpaceLeft(s[:i]))
		}
		if t.RStrip {
			end = trimSpaceRight(s, end)
		}
		if start > last {
			out = append(out, segment{start: last, end: start})
		}
		out = append(out, segment{start: start, end: end, id: t.ID, isToken: true})
		last = end
		i = end - 1
	}
	if last < len(s) {
		out = append(out, segment{start: last, end: len(s)})
	}
	return out
}

// isWordRune approximates the reference's \w (Unicode alphanumeric, marks,
// connector punctuation).
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r) ||
		unicode.Is(unicode.Nl, r) || unicode.Is(unicode.Pc, r)
}

func isSingleWord(s string, start, end int) bool {
	if start > 0 {
		if r, _ := utf8.DecodeLastRuneInString(s[:start]); isWordRune(r) {
			return false
		}
	}
	if end < len(s) {
		if r, _ := utf8.DecodeRuneInString(s[end:]); isWordRune(r) {
			return false
		}
	}
	return true
}

// trimSpaceLeft returns where the trailing whitespace of s begins.
func trimSpaceLeft(s string) int {
	for len(s) > 0 {
		r, n := utf8.DecodeLastRuneInString(s)
		if !unicode.IsSpace(r) {
			break
		}
		s = s[:len(s)-n]
	}
	return len(s)
}

// trimSpaceRight returns where the whitespace starting at s[i] ends.
func trimSpaceRight(s string, i int) int {
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			break
		}
		i += n
	}
	return i
}
