package subscriber

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// freshnessCollector exports per-source ages at scrape time. Only live
// sources appear, so the label set is bounded by the fleet and series vanish
// when a source expires.
type freshnessCollector struct{ s *Subscriber }

var (
	eventAgeDesc = prometheus.NewDesc(prometheus.BuildFQName(metricsNamespace, metricsSubsystem, "source_event_age_seconds"),
		"Seconds since the source's last applied batch (absent before the first).",
		[]string{"model", "endpoint", "dp_rank"}, nil)
	heartbeatAgeDesc = prometheus.NewDesc(prometheus.BuildFQName(metricsNamespace, metricsSubsystem, "source_heartbeat_age_seconds"),
		"Seconds since the source's last heartbeat (absent before the first).",
		[]string{"model", "endpoint", "dp_rank"}, nil)
)

func (c freshnessCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- eventAgeDesc
	ch <- heartbeatAgeDesc
}

func (c freshnessCollector) Collect(ch chan<- prometheus.Metric) {
	now := c.s.now()
	c.s.mu.RLock()
	defer c.s.mu.RUnlock()
	for src, st := range c.s.streams {
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
