package metricdoc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// fakeTB records what Check reports instead of failing the real test.
type fakeTB struct {
	testing.TB
	errs []string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Errorf(format string, args ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}

const header = "# pkg\n\n## Metrics\n\n| name | type | labels | meaning |\n|---|---|---|---|\n"

// rows documents exampleMetrics exactly.
var rows = []string{
	"| `ex_requests_total` | counter | `code`, `method` | requests |",
	"| `ex_inflight` | gauge |  | open requests |",
	"| `ex_latency_seconds` | histogram | `stage` | stage time |",
	"| `ex_custom_bytes` | gauge | `kind` | read at scrape time |",
	"| `ex_custom_total` | counter |  | read at scrape time |",
}

func writeREADME(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "README.md")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// custom is a collector outside client_golang's concrete types.
type custom struct{ bytes, total *prometheus.Desc }

func newCustom() custom {
	return custom{
		bytes: prometheus.NewDesc("ex_custom_bytes", "b", []string{"kind"}, prometheus.Labels{"const": "x"}),
		total: prometheus.NewDesc("ex_custom_total", "t", nil, nil),
	}
}

func (c custom) Describe(ch chan<- *prometheus.Desc) { ch <- c.bytes; ch <- c.total }

func (c custom) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(c.bytes, prometheus.GaugeValue, 1, "a")
	ch <- prometheus.MustNewConstMetric(c.bytes, prometheus.GaugeValue, 2, "b")
	ch <- prometheus.MustNewConstMetric(c.total, prometheus.CounterValue, 3)
}

// silent describes a family it never collects.
type silent struct{ d *prometheus.Desc }

func (s silent) Describe(ch chan<- *prometheus.Desc) { ch <- s.d }
func (s silent) Collect(chan<- prometheus.Metric)    {}

// exampleMetrics registers vectors without children, a plain gauge and a
// custom collector.
func exampleMetrics(reg prometheus.Registerer) error {
	return errors.Join(
		reg.Register(prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ex_requests_total", Help: "h"}, []string{"method", "code"})),
		reg.Register(prometheus.NewGauge(prometheus.GaugeOpts{Name: "ex_inflight", Help: "h"})),
		reg.Register(prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "ex_latency_seconds", Help: "h"}, []string{"stage"})),
		reg.Register(newCustom()),
	)
}

func TestCheck(t *testing.T) {
	replace := func(i int, row string) string {
		r := append([]string(nil), rows...)
		r[i] = row
		return header + strings.Join(r, "\n") + "\n"
	}
	drop := func(i int) string {
		r := append(append([]string(nil), rows[:i]...), rows[i+1:]...)
		return header + strings.Join(r, "\n") + "\n"
	}
	tests := []struct {
		name     string
		readme   string
		register func(prometheus.Registerer) error
		want     []string // substrings, one per expected error, in order
	}{
		{"documented exactly", header + strings.Join(rows, "\n") + "\n\nMore text.\n", exampleMetrics, nil},
		{"vector missing from readme", drop(0), exampleMetrics,
			[]string{"ex_requests_total (counter{code,method}) is registered but missing from the README"}},
		{"custom family missing from readme", drop(4), exampleMetrics,
			[]string{"ex_custom_total (counter) is registered but missing from the README"}},
		{"row not registered", header + strings.Join(rows, "\n") + "\n| `ex_gone_total` | counter |  | old |\n", exampleMetrics,
			[]string{"ex_gone_total: README line 12 documents a metric that is not registered"}},
		{"type mismatch on a vector", replace(2, "| `ex_latency_seconds` | summary | `stage` | x |"), exampleMetrics,
			[]string{"ex_latency_seconds: README line 9 says summary, registered as histogram"}},
		{"type mismatch on a custom collector", replace(3, "| `ex_custom_bytes` | counter | `kind` | x |"), exampleMetrics,
			[]string{"ex_custom_bytes: README line 10 says counter, registered as gauge"}},
		{"missing label", replace(0, "| `ex_requests_total` | counter | `code` | x |"), exampleMetrics,
			[]string{"ex_requests_total: README line 7 lists labels [code], registered with [code method]"}},
		{"extra label on a label-less metric", replace(1, "| `ex_inflight` | gauge | `pod` | x |"), exampleMetrics,
			[]string{"ex_inflight: README line 8 lists labels [pod], registered with []"}},
		{"every mismatch reported", drop(0) + "| `ex_gone_total` | counter |  | old |\n", exampleMetrics,
			[]string{"ex_requests_total (counter{code,method}) is registered", "ex_gone_total: README line 11"}},
		{"custom collector without samples", header, func(reg prometheus.Registerer) error {
			return reg.Register(silent{prometheus.NewDesc("ex_silent", "h", nil, nil)})
		}, []string{"ex_silent: the collector emitted no sample"}},
		{"registration error", header, func(reg prometheus.Registerer) error {
			c := prometheus.NewCounter(prometheus.CounterOpts{Name: "ex_twice_total", Help: "h"})
			return errors.Join(reg.Register(c), reg.Register(c))
		}, []string{"registering metrics: duplicate metrics collector registration attempted"}},
		{"no metrics section", "# pkg\n\n## Other\n", exampleMetrics, []string{`no "## Metrics" section`}},
		{"old table header", "## Metrics\n\n| metric | type | labels |\n|---|---|---|\n", exampleMetrics,
			[]string{"line 3: want the table header"}},
		{"unknown type", replace(1, "| `ex_inflight` | gauge (estimate) |  | x |"), exampleMetrics,
			[]string{`line 8: ex_inflight: type "gauge (estimate)" is not one of`}},
		{"label without backticks", replace(2, "| `ex_latency_seconds` | histogram | stage | x |"), exampleMetrics,
			[]string{`line 9: ex_latency_seconds: label "stage" is not a name in backticks`}},
		{"name without backticks", replace(1, "| ex_inflight | gauge |  | x |"), exampleMetrics,
			[]string{"line 8: name cell"}},
		{"duplicate row", header + strings.Join(rows, "\n") + "\n" + rows[1] + "\n", exampleMetrics,
			[]string{"line 12: ex_inflight already documented on line 8"}},
		{"too few cells", replace(1, "| `ex_inflight` | gauge |"), exampleMetrics, []string{"line 8: want 4 cells"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := &fakeTB{}
			Check(tb, writeREADME(t, tt.readme), tt.register)
			if len(tb.errs) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%s", len(tb.errs), len(tt.want), strings.Join(tb.errs, "\n"))
			}
			for i, w := range tt.want {
				if !strings.Contains(tb.errs[i], w) {
					t.Errorf("error %d = %q, want it to contain %q", i, tb.errs[i], w)
				}
			}
		})
	}
}

// A custom collector with no samples yet is typed by the types given.
func TestCheckGivenTypes(t *testing.T) {
	register := func(reg prometheus.Registerer) error {
		return reg.Register(silent{prometheus.NewDesc("ex_silent", "h", nil, nil)})
	}
	readme := writeREADME(t, "## Metrics\n\n| name | type | labels | meaning |\n|---|---|---|---|\n| `ex_silent` | gauge |  | x |\n")
	tb := &fakeTB{}
	Check(tb, readme, register, map[string]string{"ex_silent": "gauge"})
	if len(tb.errs) != 0 {
		t.Fatalf("typed silent collector: %v", tb.errs)
	}
	Check(tb, readme, register, map[string]string{"ex_silent": "counter"})
	if len(tb.errs) != 1 || !strings.Contains(tb.errs[0], "says gauge, registered as counter") {
		t.Fatalf("a wrong given type must fail: %v", tb.errs)
	}
}

func TestCheckMissingFile(t *testing.T) {
	tb := &fakeTB{}
	Check(tb, filepath.Join(t.TempDir(), "nope.md"), exampleMetrics)
	if len(tb.errs) != 1 || !strings.Contains(tb.errs[0], "opening readme") {
		t.Fatalf("errors = %q, want one about opening the readme", tb.errs)
	}
}

func TestParseDesc(t *testing.T) {
	tests := []struct {
		name       string
		desc       *prometheus.Desc
		wantName   string
		wantLabels string
	}{
		{"no labels", prometheus.NewDesc("a_total", "h", nil, nil), "a_total", "[]"},
		{"sorted variable labels, const labels left out",
			prometheus.NewDesc("b", `help with "variableLabels: {x}}" in it`, []string{"z", "a"}, prometheus.Labels{"c": "1"}), "b", "[a z]"},
		{"constrained labels", prometheus.V2.NewDesc("c", "h", prometheus.ConstrainedLabels{
			{Name: "k", Constraint: func(s string) string { return s }}, {Name: "j"}}, nil), "c", "[j k]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, labels, err := parseDesc(tt.desc)
			if err != nil {
				t.Fatal(err)
			}
			if name != tt.wantName || fmt.Sprint(labels) != tt.wantLabels {
				t.Errorf("parseDesc = %q %v, want %q %s", name, labels, tt.wantName, tt.wantLabels)
			}
		})
	}
}

func TestRecorderUnregister(t *testing.T) {
	tb := &fakeTB{}
	Check(tb, writeREADME(t, header), func(reg prometheus.Registerer) error {
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: "ex_temp_total", Help: "h"})
		reg.MustRegister(c)
		if !reg.Unregister(c) {
			return errors.New("unregister failed")
		}
		return nil
	})
	if len(tb.errs) != 0 {
		t.Fatalf("an unregistered collector still counted: %q", tb.errs)
	}
}
