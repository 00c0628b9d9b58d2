package sim

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/internal/metricdoc"
)

func TestMetricsREADME(t *testing.T) {
	metricdoc.Check(t, "README.md", func(reg prometheus.Registerer) error {
		_, err := NewMetrics(reg)
		return err
	})
}
