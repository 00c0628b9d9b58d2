package scorer

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/internal/metricdoc"
)

func TestMetricsREADME(t *testing.T) {
	metricdoc.Check(t, "README.md", func(reg prometheus.Registerer) error {
		m, err := NewMetrics(reg)
		if err != nil {
			return err
		}
		load := &Load{}
		load.add("10.0.0.1:8000", 1)                            // the load collector exports only known endpoints
		New(NewPools(pipePools, ""), load, Options{Metrics: m}) // a pool, so endpoint states export
		return nil
	})
}

func TestNewMetricsTwiceFails(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := NewMetrics(reg); err == nil {
		t.Error("registering the scorer metrics twice must fail")
	}
}
