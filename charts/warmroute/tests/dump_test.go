package tests

import (
	"os"
	"testing"
)

// TestDump writes every value set's rendering to $WARMROUTE_CHART_DUMP, for
// reading the chart's output by eye; it does nothing otherwise.
func TestDump(t *testing.T) {
	dir := os.Getenv("WARMROUTE_CHART_DUMP")
	if dir == "" {
		t.Skip("set WARMROUTE_CHART_DUMP to a directory to write renderings")
	}
	for _, vs := range valueSets {
		var out []byte
		for _, d := range render(t, vs.vals) {
			out = append(append(append(out, "---\n"...), d.Raw...), '\n')
		}
		if err := os.WriteFile(dir+"/"+vs.name+".yaml", out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
