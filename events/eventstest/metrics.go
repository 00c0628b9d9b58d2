package eventstest

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// MetricRow is one documented metric: its type and variable labels.
type MetricRow struct {
	Type   string
	Labels string // comma-separated, in registration order
}

// ReadmeMetrics parses the "## Metrics" table of the README at path
// (| `name` | type | `label`, `label` | meaning |).
func ReadmeMetrics(t testing.TB, path string) map[string]MetricRow {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Metrics\n")
	if !ok {
		t.Fatalf("%s has no Metrics section", path)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	row := regexp.MustCompile("^\\| `([a-z_:]+)` \\| (counter|gauge|histogram|summary) \\| ([^|]*)\\|")
	out := map[string]MetricRow{}
	for line := range strings.SplitSeq(section, "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		labels := strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(m[3]), "`", ""), " ", "")
		out[m[1]] = MetricRow{Type: m[2], Labels: labels}
	}
	return out
}

// RegisteredMetrics runs register on a recording registry and returns what
// it registered. types names the type of metrics exported by collectors
// other than the client library's counters, gauges and histograms.
func RegisteredMetrics(t testing.TB, register func(prometheus.Registerer) error, types map[string]string) map[string]MetricRow {
	t.Helper()
	rec := &recorder{}
	if err := register(rec); err != nil {
		t.Fatal(err)
	}
	out := map[string]MetricRow{}
	name := regexp.MustCompile(`fqName: "([^"]+)"`)
	labels := regexp.MustCompile(`variableLabels: \{([^}]*)\}`)
	for _, c := range rec.cs {
		ch := make(chan *prometheus.Desc, 16)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			s := d.String()
			n := name.FindStringSubmatch(s)[1]
			typ, ok := types[n]
			if !ok {
				typ = kindOf(t, c)
			}
			out[n] = MetricRow{Type: typ, Labels: labels.FindStringSubmatch(s)[1]}
		}
	}
	return out
}

// CheckReadmeMetrics fails t unless the README's table lists exactly what
// register registers, with the same types and labels.
func CheckReadmeMetrics(t testing.TB, readme string, register func(prometheus.Registerer) error, types map[string]string) {
	t.Helper()
	doc, got := ReadmeMetrics(t, readme), RegisteredMetrics(t, register, types)
	for _, n := range slices.Sorted(maps.Keys(got)) {
		if d, ok := doc[n]; !ok {
			t.Errorf("%s is registered but not in %s", n, readme)
		} else if d != got[n] {
			t.Errorf("%s: README says %+v, registered %+v", n, d, got[n])
		}
	}
	for n := range doc {
		if _, ok := got[n]; !ok {
			t.Errorf("%s is in %s but not registered", n, readme)
		}
	}
}

type recorder struct {
	prometheus.Registerer
	cs []prometheus.Collector
}

func (r *recorder) Register(c prometheus.Collector) error { r.cs = append(r.cs, c); return nil }

func kindOf(t testing.TB, c prometheus.Collector) string {
	switch c.(type) {
	case *prometheus.CounterVec:
		return "counter"
	case *prometheus.GaugeVec:
		return "gauge"
	case *prometheus.HistogramVec:
		return "histogram"
	case *prometheus.SummaryVec:
		return "summary"
	}
	m, ok := c.(prometheus.Metric)
	if !ok {
		t.Fatalf("collector %T: name its metrics' types", c)
	}
	var pb dto.Metric
	if err := m.Write(&pb); err != nil {
		t.Fatal(err)
	}
	switch {
	case pb.Counter != nil:
		return "counter"
	case pb.Gauge != nil:
		return "gauge"
	case pb.Histogram != nil:
		return "histogram"
	case pb.Summary != nil:
		return "summary"
	}
	t.Fatalf("collector %T: unknown metric type", c)
	return ""
}
