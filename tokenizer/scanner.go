package tokenizer

import (
	"fmt"
	"unicode/utf8"
)

// matcher reports where a match that starts exactly at s[i] ends, or -1.
// Each matcher is a hand-written equivalent of one regex, following
// Oniguruma's leftmost-first alternation and greedy backtracking; see
// patterns.go for the regexes and the reasoning per alternative.
type matcher func(tab []charClass, s string, i int) int

// scanner finds the leftmost match at or after a position, the way a regex
// engine's find_iter does.
type scanner struct {
	pattern string
	match   matcher
	tab     []charClass
}

// newScanner returns the scanner for a known regex, or ErrUnsupported: an
// unknown pattern must never be approximated.
func newScanner(pattern string) (*scanner, error) {
	m, ok := knownPatterns[pattern]
	if !ok {
		return nil, fmt.Errorf("compiling split regex %q: %w", pattern, ErrUnsupported)
	}
	return &scanner{pattern: pattern, match: m, tab: classTable()}, nil
}

// find returns the leftmost match in s starting at or after from.
func (sc *scanner) find(s string, from int) (start, end int) {
	for p := from; p < len(s); {
		if e := sc.match(sc.tab, s, p); e > p {
			return p, e
		}
		if s[p] < utf8.RuneSelf {
			p++
		} else {
			_, n := utf8.DecodeRuneInString(s[p:])
			p += n
		}
	}
	return -1, -1
}

// runOf returns the end of the run of runes from i whose class has a bit of
// want and none of deny. ASCII bytes, most of most prompts, take a tight
// loop; the rune decode runs only on the first non-ASCII byte.
func runOf(tab []charClass, s string, i int, want, deny charClass) int {
	for i < len(s) {
		if b := s[i]; b < utf8.RuneSelf {
			if c := asciiClass[b]; c&want == 0 || c&deny != 0 {
				return i
			}
			i++
			continue
		}
		c, n := classAt(tab, s, i)
		if c&want == 0 || c&deny != 0 {
			return i
		}
		i += n
	}
	return i
}

// runNot returns the end of the run of runes from i whose class has no bit
// of deny (a negated character class).
func runNot(tab []charClass, s string, i int, deny charClass) int {
	for i < len(s) {
		if b := s[i]; b < utf8.RuneSelf {
			if asciiClass[b]&deny != 0 {
				return i
			}
			i++
			continue
		}
		c, n := classAt(tab, s, i)
		if c&deny != 0 {
			return i
		}
		i += n
	}
	return i
}

// runMax is runOf limited to max runes, for quantifiers such as {1,3}.
func runMax(tab []charClass, s string, i int, want charClass, max int) int {
	for k := 0; k < max && i < len(s); k++ {
		c, n := classAt(tab, s, i)
		if c&want == 0 {
			return i
		}
		i += n
	}
	return i
}

// crlfRun matches [\r\n]* greedily.
func crlfRun(s string, i int) int {
	for i < len(s) && (s[i] == '\r' || s[i] == '\n') {
		i++
	}
	return i
}

// whitespace matches the tail shared by all supported patterns:
// `\s*[\r\n]+|\s+(?!\S)|\s+` at i, or -1 when s[i] is not whitespace.
// withNewline selects whether the `\s*[\r\n]+` alternative is present.
func whitespace(tab []charClass, s string, i int, withNewline bool) int {
	j, last, lastNL := i, i, -1
	for j < len(s) {
		c, n := classAt(tab, s, j)
		if c&clSpace == 0 {
			break
		}
		if c&clCRLF != 0 {
			lastNL = j
		}
		last = j
		j += n
	}
	if j == i {
		return -1
	}
	// \s* backtracks until [\r\n]+ can match: that is the last newline of
	// the run, after which no newline follows inside the run.
	if withNewline && lastNL >= 0 {
		return lastNL + 1
	}
	// \s+(?!\S): at the end of input the whole run; otherwise give back the
	// last whitespace rune so the next token can take it as its prefix.
	if j == len(s) || last == i {
		return j
	}
	return last
}
