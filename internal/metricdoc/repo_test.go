package metricdoc

import (
	"path/filepath"
	"testing"
)

// TestREADMEsDocumentEachMetricOnce: across the module, every README with a
// "## Metrics" section follows the format, and no metric is documented in two
// of them.
func TestREADMEsDocumentEachMetricOnce(t *testing.T) {
	fams, _, err := ReadREADMEs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if len(fams) == 0 {
		t.Fatal("found no documented metric: is the module root right?")
	}
}
