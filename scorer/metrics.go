package scorer

import "github.com/prometheus/client_golang/prometheus"

var inflightDesc = prometheus.NewDesc(
	"warmroute_scorer_inflight_requests",
	"Requests routed to an endpoint whose responses have not ended, as tracked by this router.",
	[]string{"endpoint"}, nil,
)

// loadCollector exports Load at scrape time, so the hot path pays nothing for
// the metric. The endpoint label is bounded by the number of model-server pods.
type loadCollector struct{ load *Load }

// NewLoadCollector returns a collector of warmroute_scorer_inflight_requests.
func NewLoadCollector(load *Load) prometheus.Collector { return loadCollector{load} }

func (c loadCollector) Describe(ch chan<- *prometheus.Desc) { ch <- inflightDesc }

func (c loadCollector) Collect(ch chan<- prometheus.Metric) {
	for ep, n := range c.load.Snapshot() {
		ch <- prometheus.MustNewConstMetric(inflightDesc, prometheus.GaugeValue, float64(n), ep)
	}
}
