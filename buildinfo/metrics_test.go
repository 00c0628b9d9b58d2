package buildinfo

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/warmroute/warmroute/internal/metricdoc"
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
	metricdoc.Check(t, "README.md", func(reg prometheus.Registerer) error {
		_, err := NewMetrics(reg)
		return err
	})
}
