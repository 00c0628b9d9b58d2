package metricdoc

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// recorder is a Registerer that registers on a real registry, so conflicts
// are still reported, and remembers every collector it accepted.
type recorder struct {
	reg        *prometheus.Registry
	collectors []prometheus.Collector
}

func (r *recorder) Register(c prometheus.Collector) error {
	if err := r.reg.Register(c); err != nil {
		return err
	}
	r.collectors = append(r.collectors, c)
	return nil
}

func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

func (r *recorder) Unregister(c prometheus.Collector) bool {
	if !r.reg.Unregister(c) {
		return false
	}
	r.collectors = slices.DeleteFunc(r.collectors, func(x prometheus.Collector) bool { return x == c })
	return true
}

// Registered registers with register on a fresh registry and returns every
// family the recorded collectors describe, by name.
//
// A custom collector that emits no sample before its first use cannot be
// typed by collecting it; types gives those families' types by name.
func Registered(register func(prometheus.Registerer) error, types ...map[string]string) (map[string]Family, error) {
	rec := &recorder{reg: prometheus.NewRegistry()}
	if err := register(rec); err != nil {
		return nil, fmt.Errorf("registering metrics: %w", err)
	}
	fams := map[string]Family{}
	for _, c := range rec.collectors {
		if err := addFamilies(fams, c, types); err != nil {
			return nil, err
		}
	}
	return fams, nil
}

// addFamilies adds the families c describes, typed by c's concrete type or
// by the samples it collects.
func addFamilies(fams map[string]Family, c prometheus.Collector, given []map[string]string) error {
	descs := describe(c)
	typ := vecType(c)
	var collected map[*prometheus.Desc]string
	if typ == "" {
		var err error
		if collected, err = collectTypes(c); err != nil {
			return err
		}
	}
	for _, d := range descs {
		name, labels, err := parseDesc(d)
		if err != nil {
			return err
		}
		t := typ
		for _, g := range given {
			if t == "" {
				t = g[name]
			}
		}
		if t == "" {
			if t = collected[d]; t == "" {
				return fmt.Errorf("%s: the collector emitted no sample, so its type is unknown: give it state before Check collects", name)
			}
		}
		fams[name] = Family{Name: name, Type: t, Labels: labels}
	}
	return nil
}

func describe(c prometheus.Collector) []*prometheus.Desc {
	ch := make(chan *prometheus.Desc)
	go func() {
		c.Describe(ch)
		close(ch)
	}()
	var descs []*prometheus.Desc
	for d := range ch {
		descs = append(descs, d)
	}
	return descs
}

// vecType names the type of the client_golang vectors, which collect nothing
// until they have children.
func vecType(c prometheus.Collector) string {
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
	return ""
}

// collectTypes collects c once and types each descriptor by its samples.
func collectTypes(c prometheus.Collector) (map[*prometheus.Desc]string, error) {
	ch := make(chan prometheus.Metric)
	go func() {
		c.Collect(ch)
		close(ch)
	}()
	types := map[*prometheus.Desc]string{}
	var err error
	for m := range ch {
		var pb dto.Metric
		if werr := m.Write(&pb); werr != nil && err == nil {
			err = fmt.Errorf("writing %s: %w", m.Desc(), werr)
		}
		types[m.Desc()] = sampleType(&pb)
	}
	return types, err
}

func sampleType(m *dto.Metric) string {
	switch {
	case m.Counter != nil:
		return "counter"
	case m.Gauge != nil:
		return "gauge"
	case m.Histogram != nil:
		return "histogram"
	case m.Summary != nil:
		return "summary"
	}
	return "untyped"
}

// parseDesc reads the name and variable labels from d's String, the only
// place client_golang exposes them:
// Desc{fqName: "n", help: "h", unit: "u", constLabels: {...}, variableLabels: {a,c(b)}}.
func parseDesc(d *prometheus.Desc) (string, []string, error) {
	s := d.String()
	rest, ok := strings.CutPrefix(s, `Desc{fqName: `)
	if !ok {
		return "", nil, fmt.Errorf("unexpected descriptor %s", s)
	}
	q, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return "", nil, fmt.Errorf("reading name of %s: %w", s, err)
	}
	name, _ := strconv.Unquote(q)
	const open = "variableLabels: {"
	i := strings.LastIndex(s, open)
	if i < 0 || !strings.HasSuffix(s, "}}") {
		return "", nil, fmt.Errorf("reading labels of %s: no variableLabels", s)
	}
	var labels []string
	for _, l := range strings.Split(s[i+len(open):len(s)-2], ",") {
		if l != "" {
			l = strings.TrimSuffix(strings.TrimPrefix(l, "c("), ")")
			labels = append(labels, l)
		}
	}
	slices.Sort(labels)
	return name, labels, nil
}
