package bus_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/internal/metricdoc"
)

// TestReadmeListsEveryMetric: the README's Metrics table is the registry's.
func TestReadmeListsEveryMetric(t *testing.T) {
	metricdoc.Check(t, "README.md", func(reg prometheus.Registerer) error {
		_, err := bus.NewMetrics(reg)
		return err
	})
}

// TestNewMetricsTwiceOnOneRegistry: a second connection's metrics on the
// same registry are refused with an error rather than dropped silently.
func TestNewMetricsTwiceOnOneRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := bus.NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := bus.NewMetrics(reg); err == nil {
		t.Fatal("second NewMetrics on one registry returned no error")
	}
}
