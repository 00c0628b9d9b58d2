package predictions_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/events/predictions"
	"github.com/warmroute/warmroute/internal/metricdoc"
)

// TestNewMetricsTwiceOnOneRegistry: a second share's metrics on the same
// registry are refused with an error rather than dropped silently.
func TestNewMetricsTwiceOnOneRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := predictions.NewMetrics(reg); err != nil {
		t.Fatalf("first NewMetrics: %v", err)
	}
	if _, err := predictions.NewMetrics(reg); err == nil {
		t.Fatal("second NewMetrics on one registry returned no error")
	}
}

// TestReadmeListsEveryMetric: the README's Metrics table is the registry's.
func TestReadmeListsEveryMetric(t *testing.T) {
	metricdoc.Check(t, "README.md", func(reg prometheus.Registerer) error {
		_, err := predictions.NewMetrics(reg)
		return err
	})
}
