package tokenizer

// Classes of patO200k: "upper" is [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] and
// "lower" is [\p{Ll}\p{Lm}\p{Lo}\p{M}]; Lm, Lo and M belong to both, which is
// why the first alternative needs real backtracking.
const (
	clO200kUpper = clLu | clLt | clLm | clLo | clM
	clO200kLower = clLl | clLm | clLo | clM
)

// matchO200k matches patO200k.
func matchO200k(tab []charClass, s string, i int) int {
	c, n := classAt(tab, s, i)
	prefix := c&(clL|clN|clCRLF) == 0
	if e := o200kWord(tab, s, i, n, prefix, o200kLowerTail); e > 0 {
		return e
	}
	if e := o200kWord(tab, s, i, n, prefix, o200kUpperHead); e > 0 {
		return e
	}
	if c&clN != 0 {
		return runMax(tab, s, i, clN, 3)
	}
	if e := spacePunct(tab, s, i, clSpace|clL|clN); e > 0 {
		for e < len(s) && (s[e] == '\r' || s[e] == '\n' || s[e] == '/') {
			e++
		}
		return e
	}
	return whitespace(tab, s, i, true)
}

// o200kWord tries a word alternative with the optional leading rune taken
// (when allowed) and then without it, followed by an optional contraction.
func o200kWord(tab []charClass, s string, i, n int, prefix bool, body func([]charClass, string, int) int) int {
	e := -1
	if prefix {
		e = body(tab, s, i+n)
	}
	if e < 0 {
		e = body(tab, s, i)
	}
	if e < 0 {
		return -1
	}
	if c := contraction(s, e, true); c > 0 {
		return c
	}
	return e
}

// o200kLowerTail matches upper*lower+ at i. The greedy upper* gives back
// runes until lower+ can start; lower+ then runs greedily.
func o200kLowerTail(tab []charClass, s string, i int) int {
	if i >= len(s) {
		return -1
	}
	u := runOf(tab, s, i, clO200kUpper, 0)
	if u < len(s) {
		if c, _ := classAt(tab, s, u); c&clO200kLower != 0 {
			return runOf(tab, s, u, clO200kLower, 0)
		}
	}
	// Backtrack: the last rune inside the upper run that is also lower
	// starts lower+, which stops right after it (the runes following it in
	// the run are upper-only, or the run ended on a non-lower rune).
	last := -1
	for p := i; p < u; {
		c, n := classAt(tab, s, p)
		if c&clO200kLower != 0 {
			last = p + n
		}
		p += n
	}
	return last
}

// o200kUpperHead matches upper+lower* at i.
func o200kUpperHead(tab []charClass, s string, i int) int {
	if i >= len(s) {
		return -1
	}
	u := runOf(tab, s, i, clO200kUpper, 0)
	if u == i {
		return -1
	}
	return runOf(tab, s, u, clO200kLower, 0)
}
