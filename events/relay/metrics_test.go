package relay

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/warmroute/warmroute/internal/metricdoc"
)

func mustMetrics(t testing.TB) *Metrics {
	t.Helper()
	m, err := NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestNewMetricsTwiceOnOneRegistry: a second relay's metrics on the same
// registry are refused with an error rather than dropped silently.
func TestNewMetricsTwiceOnOneRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := NewMetrics(reg); err != nil {
		t.Fatalf("first NewMetrics: %v", err)
	}
	if _, err := NewMetrics(reg); err == nil {
		t.Fatal("second NewMetrics on one registry returned no error")
	}
}

// TestReadmeListsEveryMetric: the README's Metrics table is the registry's.
func TestReadmeListsEveryMetric(t *testing.T) {
	metricdoc.Check(t, "README.md", func(reg prometheus.Registerer) error {
		_, err := NewMetrics(reg)
		return err
	})
}
