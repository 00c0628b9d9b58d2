package affinity_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/affinity"
	"github.com/warmroute/warmroute/internal/metricdoc"
)

func TestNewMetricsTwiceOnOneRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := affinity.NewMetrics(reg); err != nil {
		t.Fatalf("first NewMetrics: %v", err)
	}
	if _, err := affinity.NewMetrics(reg); err == nil {
		t.Fatal("second NewMetrics on one registry returned no error")
	}
}

func TestReadmeListsEveryMetric(t *testing.T) {
	metricdoc.Check(t, "README.md", func(reg prometheus.Registerer) error {
		_, err := affinity.NewMetrics(reg)
		return err
	})
}
