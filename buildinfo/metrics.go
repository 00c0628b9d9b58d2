package buildinfo

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics is the warmroute_build_info gauge: one series, value 1, whose
// labels name the build, so dashboards can join it to any other series.
type Metrics struct {
	info *prometheus.GaugeVec
}

// NewMetrics registers warmroute_build_info for the running binary on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	return newMetrics(reg, Read())
}

func newMetrics(reg prometheus.Registerer, i Info) (*Metrics, error) {
	i = i.orUnknown()
	m := &Metrics{info: prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "warmroute",
		Name:      "build_info",
		Help:      "Build of the running binary; the value is always 1.",
	}, []string{"version", "revision", "goversion"})}
	if err := reg.Register(m.info); err != nil {
		return nil, fmt.Errorf("registering warmroute_build_info: %w", err)
	}
	m.info.WithLabelValues(i.Version, i.Revision, i.GoVersion).Set(1)
	return m, nil
}
