package tests

import (
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestExampleValues: the documented example value files render and decode.
func TestExampleValues(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(chartDir(t), "examples", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no example values (%v)", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var vals map[string]any
			if err := yaml.UnmarshalStrict(raw, &vals); err != nil {
				t.Fatalf("parsing %s: %v", f, err)
			}
			for _, d := range render(t, vals) {
				if err := decodeStrict(d); err != nil {
					t.Error(err)
				}
			}
		})
	}
}
