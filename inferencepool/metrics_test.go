package inferencepool

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/internal/metricdoc"
)

// TestReadmeListsEveryMetric: the README's Metrics table is the registry's.
func TestReadmeListsEveryMetric(t *testing.T) {
	metricdoc.Check(t, "README.md", func(reg prometheus.Registerer) error {
		_, err := NewMetrics(reg)
		return err
	})
}

func TestNewMetricsTwiceFails(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := NewMetrics(reg); err == nil {
		t.Fatal("registering twice returned no error")
	}
}
