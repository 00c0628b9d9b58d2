package subscriber

import (
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// freshnessCollector exports per-source ages at scrape time. Only live
// sources appear, so the label set is bounded by the fleet and series vanish
// when a source expires.
// It exports the sources of the first Subscriber built with its Metrics.
type freshnessCollector struct{ s atomic.Pointer[Subscriber] }

var (
	eventAgeDesc = prometheus.NewDesc(prometheus.BuildFQName(metricsNamespace, metricsSubsystem, "source_event_age_seconds"),
		"Seconds since the source's last applied batch (absent before the first).",
		[]string{"model", "endpoint", "dp_rank"}, nil)
	heartbeatAgeDesc = prometheus.NewDesc(prometheus.BuildFQName(metricsNamespace, metricsSubsystem, "source_heartbeat_age_seconds"),
		"Seconds since the source's last heartbeat (absent before the first).",
		[]string{"model", "endpoint", "dp_rank"}, nil)
)

func (c *freshnessCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- eventAgeDesc
	ch <- heartbeatAgeDesc
}

func (c *freshnessCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.s.Load()
	if s == nil {
		return
	}
	now := s.now()
	s.mu.RLock()
	defer s.mu.RUnlock()
	for src, st := range s.streams {
		labels := []string{src.Model, src.Endpoint, strconv.Itoa(src.DPRank)}
		if !st.fresh.LastEvent.IsZero() {
			ch <- prometheus.MustNewConstMetric(eventAgeDesc, prometheus.GaugeValue,
				now.Sub(st.fresh.LastEvent).Seconds(), labels...)
		}
		if !st.fresh.LastHeartbeat.IsZero() {
			ch <- prometheus.MustNewConstMetric(heartbeatAgeDesc, prometheus.GaugeValue,
				now.Sub(st.fresh.LastHeartbeat).Seconds(), labels...)
		}
	}
}
