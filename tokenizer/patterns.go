package tokenizer

// The split regexes of the supported families, byte for byte as they appear
// in tokenizer.json, mapped to hand-written matchers. Go's regexp has no
// lookahead and its \s is ASCII-only; the reference engine (Oniguruma) has
// both and applies Unicode classes, so each alternative is re-derived here.
const (
	// patCL100k is Llama 3's split (cl100k style, digits in groups of 3).
	patCL100k = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// patQwen is Qwen 2/3's split: the same with single digits.
	patQwen = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// patO200k is GPT-OSS's o200k split with case-aware words.
	patO200k = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// patDigits3 is DeepSeek-V3's first split.
	patDigits3 = `\p{N}{1,3}`
	// patCJK is DeepSeek-V3's second split: CJK ideographs and kana runs.
	patCJK = "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"
	// patDeepSeek is DeepSeek-V3's third split; \r and \n are literal
	// control characters in the file, not escapes.
	patDeepSeek = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"
	// patGPT2 is the ByteLevel pre-tokenizer's own regex (use_regex: true).
	patGPT2 = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
)

var knownPatterns = map[string]matcher{
	patCL100k:   func(t []charClass, s string, i int) int { return matchCL100k(t, s, i, 3) },
	patQwen:     func(t []charClass, s string, i int) int { return matchCL100k(t, s, i, 1) },
	patO200k:    matchO200k,
	patDigits3:  func(t []charClass, s string, i int) int { return emptyAsFail(i, runMax(t, s, i, clN, 3)) },
	patCJK:      matchCJK,
	patDeepSeek: matchDeepSeek,
	patGPT2:     matchGPT2,
}

// emptyAsFail turns an empty match into no match; none of the patterns can
// match the empty string.
func emptyAsFail(i, e int) int {
	if e == i {
		return -1
	}
	return e
}

// contraction matches `'s|'t|'re|'ve|'m|'ll|'d` at i, case-insensitively
// when fold is set. Under Unicode case folding U+017F (long s) folds to
// 's', so Oniguruma's (?i:'s) accepts it too.
//
// The quote test is split from the rest so that it inlines into the
// matchers: they call this at every word, and nearly no word starts with a
// quote (the call itself was 6 % of encoding prose).
func contraction(s string, i int, fold bool) int {
	if i >= len(s) || s[i] != '\'' {
		return -1
	}
	return contractionAfterQuote(s, i, fold)
}

// contractionAfterQuote is contraction once s[i] is known to be a quote.
func contractionAfterQuote(s string, i int, fold bool) int {
	rest := s[i+1:]
	low := func(k int) byte {
		if k >= len(rest) {
			return 0
		}
		b := rest[k]
		if fold && b >= 'A' && b <= 'Z' {
			b += 'a' - 'A'
		}
		return b
	}
	switch low(0) {
	case 's', 't', 'm', 'd':
		return i + 2
	case 'r', 'v':
		if low(1) == 'e' {
			return i + 3
		}
	case 'l':
		if low(1) == 'l' {
			return i + 3
		}
	}
	if fold && len(rest) >= 2 && rest[0] == 0xC5 && rest[1] == 0xBF {
		return i + 3
	}
	return -1
}

// matchCL100k matches patCL100k (maxDigits 3) or patQwen (maxDigits 1).
func matchCL100k(tab []charClass, s string, i, maxDigits int) int {
	if e := contraction(s, i, true); e > 0 {
		return e
	}
	c, n := classAt(tab, s, i)
	// [^\r\n\p{L}\p{N}]?\p{L}+ : with the optional rune first, then without.
	if c&(clL|clN|clCRLF) == 0 {
		if e := runOf(tab, s, i+n, clL, 0); e > i+n {
			return e
		}
	}
	if c&clL != 0 {
		return runOf(tab, s, i, clL, 0)
	}
	if c&clN != 0 {
		return runMax(tab, s, i, clN, maxDigits)
	}
	if e := spacePunct(tab, s, i, clSpace|clL|clN); e > 0 {
		return crlfRun(s, e)
	}
	return whitespace(tab, s, i, true)
}

// spacePunct matches ` ?[^deny]+` where deny always includes \s, so the
// optional space never needs to be given back.
func spacePunct(tab []charClass, s string, i int, deny charClass) int {
	j := i
	if s[i] == ' ' {
		j++
	}
	if j < len(s) {
		if e := runNot(tab, s, j, deny); e > j {
			return e
		}
	}
	return -1
}

// matchGPT2 matches patGPT2: case-sensitive contractions and optional
// leading spaces.
func matchGPT2(tab []charClass, s string, i int) int {
	if e := contraction(s, i, false); e > 0 {
		return e
	}
	j := i
	if s[i] == ' ' {
		j++
	}
	if j < len(s) {
		c, _ := classAt(tab, s, j)
		switch {
		case c&clL != 0:
			return runOf(tab, s, j, clL, 0)
		case c&clN != 0:
			return runOf(tab, s, j, clN, 0)
		}
	}
	if e := spacePunct(tab, s, i, clSpace|clL|clN); e > 0 {
		return e
	}
	return whitespace(tab, s, i, false)
}

// matchCJK matches patCJK.
func matchCJK(_ []charClass, s string, i int) int {
	e := i
	for e+3 <= len(s) && isCJK(s[e:e+3]) {
		e += 3
	}
	return emptyAsFail(i, e)
}

// isCJK reports whether the 3-byte UTF-8 sequence b is in
// U+4E00..U+9FA5, U+3040..U+309F or U+30A0..U+30FF.
func isCJK(b string) bool {
	if b[0] < 0xE3 || b[0] > 0xE9 || b[1]&0xC0 != 0x80 || b[2]&0xC0 != 0x80 {
		return false
	}
	r := rune(b[0]&0x0F)<<12 | rune(b[1]&0x3F)<<6 | rune(b[2]&0x3F)
	return (r >= 0x4E00 && r <= 0x9FA5) || (r >= 0x3040 && r <= 0x30FF)
}

// matchDeepSeek matches patDeepSeek.
func matchDeepSeek(tab []charClass, s string, i int) int {
	c, n := classAt(tab, s, i)
	if c&clASCIIPunct != 0 {
		if e := runOf(tab, s, i+n, clASCIIAlpha, 0); e > i+n {
			return e
		}
	}
	// [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+
	if c&(clCRLF|clL|clP|clS) == 0 {
		if e := runOf(tab, s, i+n, clL|clM, 0); e > i+n {
			return e
		}
	}
	if c&(clL|clM) != 0 {
		return runOf(tab, s, i, clL|clM, 0)
	}
	// ` ?[\p{P}\p{S}]+[\r\n]*`
	j := i
	if s[i] == ' ' {
		j++
	}
	if e := runOf(tab, s, j, clP|clS, 0); e > j {
		return crlfRun(s, e)
	}
	return whitespace(tab, s, i, true)
}
