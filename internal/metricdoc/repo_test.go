package metricdoc

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestREADMEsDocumentEachMetricOnce: across the module, every README with a
// "## Metrics" section follows the format, and no metric is documented in two
// of them.
func TestREADMEsDocumentEachMetricOnce(t *testing.T) {
	root := filepath.Join("..", "..")
	owner := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || d.Name() != "README.md" || !hasMetricsSection(t, path) {
			return nil
		}
		fams, err := ReadREADME(path)
		if err != nil {
			t.Error(err)
			return nil
		}
		for name := range fams {
			if prev, ok := owner[name]; ok {
				t.Errorf("%s is documented in both %s and %s", name, prev, path)
			}
			owner[name] = path
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(owner) == 0 {
		t.Fatal("found no documented metric: is the module root right?")
	}
}

func hasMetricsSection(t *testing.T, path string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return slices.Contains(strings.Split(string(b), "\n"), sectionHeading)
}
