package harness

import (
	"context"
	"fmt"
	"io"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metrics is one scrape: metric families by name. It is read-only after
// ParseMetrics, so concurrent reads are safe; a nil Metrics sums to zero.
type Metrics map[string]*dto.MetricFamily

// Scrape fetches a Prometheus text exposition from url.
func Scrape(ctx context.Context, url string) (Metrics, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scraping %s: %s", url, resp.Status)
	}
	return ParseMetrics(resp.Body)
}

// ParseMetrics reads the Prometheus text exposition format.
func ParseMetrics(r io.Reader) (Metrics, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parsing metrics: %w", err)
	}
	return fams, nil
}

// Sum adds the values of every counter, gauge or untyped sample of family
// name whose labels include all of match (nil matches all). An absent family
// sums to zero, which is what a never-touched labelled metric looks like.
func (m Metrics) Sum(name string, match map[string]string) float64 {
	f, ok := m[name]
	if !ok {
		return 0
	}
	var sum float64
	for _, s := range f.GetMetric() {
		if hasLabels(s, match) {
			sum += s.GetGauge().GetValue() + s.GetCounter().GetValue() + s.GetUntyped().GetValue()
		}
	}
	return sum
}

func hasLabels(s *dto.Metric, match map[string]string) bool {
	found := 0
	for _, lp := range s.GetLabel() {
		if v, ok := match[lp.GetName()]; ok && v == lp.GetValue() {
			found++
		}
	}
	return found == len(match)
}

// Value returns the value of the first counter, gauge or untyped sample of
// family name whose labels include all of match, and whether there is one.
func (m Metrics) Value(name string, match map[string]string) (float64, bool) {
	f, ok := m[name]
	if !ok {
		return 0, false
	}
	for _, s := range f.GetMetric() {
		if hasLabels(s, match) {
			return s.GetGauge().GetValue() + s.GetCounter().GetValue() + s.GetUntyped().GetValue(), true
		}
	}
	return 0, false
}
