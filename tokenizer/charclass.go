package tokenizer

import (
	"sync"
	"unicode"
	"unicode/utf8"
)

// charClass is a bit set of the Unicode properties the supported
// pre-tokenizer patterns test. Oniguruma (used by the reference) applies
// Unicode general categories and the White_Space property, which Go's unicode
// tables provide too.
type charClass uint16

const (
	clLu charClass = 1 << iota
	clLl
	clLt
	clLm
	clLo
	clM
	clN
	clP
	clS
	clSpace // White_Space, what Oniguruma's \s means under Unicode
	clCRLF  // '\r' or '\n'
	clASCIIPunct
	clASCIIAlpha

	clL = clLu | clLl | clLt | clLm | clLo
)

var (
	bmpOnce  sync.Once
	bmpTable []charClass
)

// classOf computes the class of r from the unicode tables.
func classOf(r rune) charClass {
	var c charClass
	switch {
	case unicode.Is(unicode.Lu, r):
		c |= clLu
	case unicode.Is(unicode.Ll, r):
		c |= clLl
	case unicode.Is(unicode.Lt, r):
		c |= clLt
	case unicode.Is(unicode.Lm, r):
		c |= clLm
	case unicode.Is(unicode.Lo, r):
		c |= clLo
	case unicode.Is(unicode.M, r):
		c |= clM
	case unicode.Is(unicode.N, r):
		c |= clN
	case unicode.Is(unicode.P, r):
		c |= clP
	case unicode.Is(unicode.S, r):
		c |= clS
	}
	if unicode.IsSpace(r) {
		c |= clSpace
	}
	if r == '\r' || r == '\n' {
		c |= clCRLF
	}
	if r < utf8.RuneSelf {
		if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') {
			c |= clASCIIAlpha
		}
		if c&(clP|clS) != 0 {
			c |= clASCIIPunct
		}
	}
	return c
}

// classTable returns the precomputed classes of the Basic Multilingual
// Plane; lookups there dominate and a binary search per rune would not.
func classTable() []charClass {
	bmpOnce.Do(func() {
		t := make([]charClass, 0x10000)
		for r := range t {
			t[r] = classOf(rune(r))
		}
		bmpTable = t
	})
	return bmpTable
}

// asciiClass is the class of each ASCII byte, in an array so that the
// ASCII fast paths index it without a bounds check or a rune decode.
var asciiClass = func() (t [utf8.RuneSelf]charClass) {
	for b := range t {
		t[b] = classOf(rune(b))
	}
	return t
}()

// classAt decodes the rune at s[i] and returns its class and byte size.
// Invalid UTF-8 cannot reach the scanners: input is validated first.
func classAt(tab []charClass, s string, i int) (charClass, int) {
	if b := s[i]; b < utf8.RuneSelf {
		return asciiClass[b], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	if r < 0x10000 {
		return tab[r], n
	}
	return classOf(r), n
}
