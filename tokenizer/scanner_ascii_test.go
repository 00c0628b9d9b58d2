package tokenizer

import (
	"testing"
	"unicode/utf8"
)

// refRunOf and refRunNot are the scanners' runs without the ASCII fast
// path: every rune decoded and classified from the BMP table.
func refRunOf(tab []charClass, s string, i int, want, deny charClass) int {
	for i < len(s) {
		c, n := refClassAt(tab, s, i)
		if c&want == 0 || c&deny != 0 {
			return i
		}
		i += n
	}
	return i
}

func refRunNot(tab []charClass, s string, i int, deny charClass) int {
	for i < len(s) {
		c, n := refClassAt(tab, s, i)
		if c&deny != 0 {
			return i
		}
		i += n
	}
	return i
}

func refClassAt(tab []charClass, s string, i int) (charClass, int) {
	r, n := utf8.DecodeRuneInString(s[i:])
	if r < 0x10000 {
		return tab[r], n
	}
	return classOf(r), n
}

// scannerMasks are the class sets the matchers pass to runOf and runNot.
var scannerMasks = []struct{ want, deny charClass }{
	{clL, 0}, {clN, 0}, {clL | clM, 0}, {clP | clS, 0}, {clASCIIAlpha, 0},
	{clO200kUpper, 0}, {clO200kLower, 0}, {^charClass(0), clSpace | clL | clN},
}

func checkRunsAgree(t *testing.T, s string) {
	tab := classTable()
	for i := 0; i < len(s); i++ {
		if !utf8.RuneStart(s[i]) {
			continue
		}
		if got, want := classOfAt(tab, s, i), classOfRef(tab, s, i); got != want {
			t.Fatalf("classAt(%q, %d) = %v, reference %v", s, i, got, want)
		}
		for _, m := range scannerMasks {
			if got, want := runOf(tab, s, i, m.want, m.deny), refRunOf(tab, s, i, m.want, m.deny); got != want {
				t.Fatalf("runOf(%q, %d, %b, %b) = %d, reference %d", s, i, m.want, m.deny, got, want)
			}
			if got, want := runNot(tab, s, i, m.deny), refRunNot(tab, s, i, m.deny); got != want {
				t.Fatalf("runNot(%q, %d, %b) = %d, reference %d", s, i, m.deny, got, want)
			}
		}
	}
}

func classOfAt(tab []charClass, s string, i int) [2]int {
	c, n := classAt(tab, s, i)
	return [2]int{int(c), n}
}

func classOfRef(tab []charClass, s string, i int) [2]int {
	c, n := refClassAt(tab, s, i)
	return [2]int{int(c), n}
}

func TestASCIIRunsMatchReference(t *testing.T) {
	g := loadGolden(t)
	for _, s := range append([]string{"", "abc DEF 123 !?\r\n\t", "naïve Ünïcode ǅ 東京 😀 ‿"}, g.Texts[:200]...) {
		checkRunsAgree(t, s)
	}
}

// FuzzASCIIRuns checks the scanners' ASCII fast path against full rune
// decoding.
func FuzzASCIIRuns(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		if utf8.ValidString(s) {
			checkRunsAgree(t, s)
		}
	})
}
