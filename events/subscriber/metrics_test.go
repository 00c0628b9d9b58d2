package subscriber_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/internal/metricdoc"
)

// TestNewMetricsTwiceOnOneRegistry: a second subscriber's metrics on the
// same registry, or a conflicting collector already there, are refused with
// an error rather than dropped silently.
func TestNewMetricsTwiceOnOneRegistry(t *testing.T) {
	tests := []struct {
		name  string
		first func(reg *prometheus.Registry) error
	}{
		{"second NewMetrics", func(reg *prometheus.Registry) error {
			_, err := subscriber.NewMetrics(reg)
			return err
		}},
		{"conflicting collector", func(reg *prometheus.Registry) error {
			return reg.Register(prometheus.NewGauge(prometheus.GaugeOpts{
				Name: "warmroute_events_subscriber_gaps_total", Help: "not a counter"}))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			if err := tt.first(reg); err != nil {
				t.Fatal(err)
			}
			if _, err := subscriber.NewMetrics(reg); err == nil {
				t.Fatal("NewMetrics on a registry holding its metrics returned no error")
			}
		})
	}
}

// TestReadmeListsEveryMetric: the README's Metrics table is the registry's.
func TestReadmeListsEveryMetric(t *testing.T) {
	metricdoc.Check(t, "README.md", func(reg prometheus.Registerer) error {
		_, err := subscriber.NewMetrics(reg)
		return err
	}, map[string]string{ // exported at scrape time by the per-source collector
		"warmroute_events_source_event_age_seconds":     "gauge",
		"warmroute_events_source_heartbeat_age_seconds": "gauge",
	})
}
