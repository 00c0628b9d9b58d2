package buildinfo

import (
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestMetricsExposeOneSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := newMetrics(reg, Info{"v1.2.0", "abc", "go1.27.3"}); err != nil {
		t.Fatal(err)
	}
	want := `# HELP warmroute_build_info Build of the running binary; the value is always 1.
# TYPE warmroute_build_info gauge
warmroute_build_info{goversion="go1.27.3",revision="abc",version="v1.2.0"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

func TestNewMetricsReturnsRegistrationErrors(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := NewMetrics(reg); err == nil {
		t.Error("second NewMetrics on one registry: want an error")
	}
}

// TestReadmeMetricsTable keeps the README's table equal to what is registered.
func TestReadmeMetricsTable(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, mf := range mfs {
		var labels []string
		for _, lp := range mf.GetMetric()[0].GetLabel() {
			labels = append(labels, lp.GetName())
		}
		sort.Strings(labels)
		got = append(got, mf.GetName()+" "+strings.ToLower(mf.GetType().String())+" "+strings.Join(labels, ","))
	}
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(b), "## Metrics\n")
	var documented []string
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		var labels []string
		for l := range strings.SplitSeq(cells[3], ",") {
			if l = strings.Trim(strings.TrimSpace(l), "`"); l != "" {
				labels = append(labels, l)
			}
		}
		sort.Strings(labels)
		documented = append(documented, strings.Trim(strings.TrimSpace(cells[1]), "`")+" "+
			strings.TrimSpace(cells[2])+" "+strings.Join(labels, ","))
	}
	if strings.Join(got, "\n") != strings.Join(documented, "\n") {
		t.Errorf("registered:\n%s\nREADME documents:\n%s", strings.Join(got, "\n"), strings.Join(documented, "\n"))
	}
}
