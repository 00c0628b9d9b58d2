package relay

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
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
