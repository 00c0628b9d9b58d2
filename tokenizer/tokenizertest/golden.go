package tokenizertest

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Golden is the tokenizer's golden corpus (tokenizer/testdata/golden.json.gz):
// texts and, per family, the ids and decodings Hugging Face tokenizers gave
// them. Other packages' benchmarks draw real prose and real token ids from
// it.
type Golden struct {
	Version  string                  `json:"tokenizers_version"`
	Texts    []string                `json:"texts"`
	Families map[string]GoldenFamily `json:"families"`
}

// GoldenFamily is one family's expected output for each of Golden.Texts.
type GoldenFamily struct {
	Plain   [][]uint32 `json:"plain"`   // ids without special tokens
	Special [][]uint32 `json:"special"` // ids with the family's special tokens
	Decoded []string   `json:"decoded"` // Plain decoded back to text
}

var goldenOnce = sync.OnceValues(func() (*Golden, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(root, "tokenizer", "testdata", "golden.json.gz"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	var g Golden
	if err := json.NewDecoder(zr).Decode(&g); err != nil {
		return nil, fmt.Errorf("decoding the golden corpus: %w", err)
	}
	return &g, nil
})

// ReadGolden returns the golden corpus, read once per process.
func ReadGolden() (*Golden, error) { return goldenOnce() }

// LoadGolden is ReadGolden that fails tb when the file cannot be read.
func LoadGolden(tb testing.TB) *Golden {
	tb.Helper()
	g, err := goldenOnce()
	if err != nil {
		tb.Fatalf("reading the golden corpus: %v", err)
	}
	return g
}
