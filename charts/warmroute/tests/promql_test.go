package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"

	"github.com/warmroute/warmroute/internal/metricdoc"
)

// The chart's alert rules and dashboard queries are parsed with Prometheus's
// own PromQL parser, and every metric and label they name is checked against
// the metrics the repository documents (each package's README table, which
// that package's tests check against its registry).

var promqlParser = parser.NewParser(parser.Options{})

// query is one PromQL expression the chart ships and where it comes from.
type query struct {
	where string
	expr  string
}

// ruleQueries lists every rule expression of files/alerts.yaml.
func ruleQueries(t *testing.T) []query {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(chartDir(t), "files", "alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Alert  string `json:"alert"`
				Record string `json:"record"`
				Expr   string `json:"expr"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.Unmarshal(raw, &f); err != nil {
		t.Fatalf("alerts.yaml: %v", err)
	}
	var out []query
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			out = append(out, query{where: "alerts.yaml " + g.Name + "/" + r.Alert + r.Record, expr: r.Expr})
		}
	}
	if len(out) == 0 {
		t.Fatal("alerts.yaml has no rules")
	}
	return out
}

// grafanaVars stands in for the dashboard's variables and Grafana's
// built-in interval macros, with values the PromQL parser accepts.
var grafanaVars = strings.NewReplacer(
	"$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h",
	"${job}", ".*", "$job", ".*",
)

// dashboardQueries lists every panel target of files/dashboard.json with
// Grafana's variables substituted. A `$` left after substitution names a
// variable the dashboard does not define, which fails the test.
func dashboardQueries(t *testing.T) []query {
	t.Helper()
	var out []query
	for _, p := range loadDashboard(t).Panels {
		for _, tg := range p.Targets {
			expr := grafanaVars.Replace(tg.Expr)
			if strings.Contains(expr, "$") {
				t.Errorf("dashboard panel %q uses an unknown variable: %s", p.Title, tg.Expr)
			}
			out = append(out, query{where: "dashboard panel " + p.Title, expr: expr})
		}
	}
	return out
}

// selector is one vector selector of a parsed query: its metric name and
// the labels it matches on or aggregates by.
type selector struct {
	name   string
	labels []string
}

// selectors parses q and lists what each vector selector names; a query
// that does not parse fails the test.
func selectors(t *testing.T, q query) []selector {
	t.Helper()
	sels, err := parseSelectors(q.expr)
	if err != nil {
		t.Errorf("%s does not parse: %v\n%s", q.where, err, q.expr)
	}
	return sels
}

// parseSelectors parses expr and lists what each vector selector names.
// Labels in a by() clause are attributed to every selector beneath the
// aggregation.
func parseSelectors(expr string) ([]selector, error) {
	ast, err := promqlParser.ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	var out []selector
	parser.Inspect(ast, func(node parser.Node, path []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		s := selector{name: vs.Name}
		for _, m := range vs.LabelMatchers {
			if m.Name == labels.MetricName {
				s.name = m.Value
				continue
			}
			s.labels = append(s.labels, m.Name)
		}
		for _, n := range path {
			if agg, ok := n.(*parser.AggregateExpr); ok && !agg.Without {
				s.labels = append(s.labels, agg.Grouping...)
			}
		}
		out = append(out, s)
		return nil
	})
	return out, nil
}

// documentedFamilies reads every README's metric table in the repository
// (the chart's own directory has none).
func documentedFamilies(t *testing.T) map[string]metricdoc.Family {
	t.Helper()
	fams, _, err := metricdoc.ReadREADMEs(repoRoot(t), "charts")
	if err != nil {
		t.Fatal(err)
	}
	if len(fams) == 0 {
		t.Fatal("no README documents a metric: is the repository root right?")
	}
	return fams
}

// targetLabels are the labels Prometheus adds to every scraped series.
var targetLabels = []string{"job", "instance", "namespace", "pod", "container", "service", "endpoint"}

// family resolves a series name to its documented family and the labels
// its series carry: a histogram's _bucket series add le.
func family(fams map[string]metricdoc.Family, name string) (metricdoc.Family, []string, bool) {
	if f, ok := fams[name]; ok {
		return f, f.Labels, true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, cut := strings.CutSuffix(name, suffix)
		f, ok := fams[base]
		if !cut || !ok || (f.Type != "histogram" && f.Type != "summary") {
			continue
		}
		if suffix == "_bucket" {
			if f.Type != "histogram" {
				return f, nil, false
			}
			return f, append(slices.Clone(f.Labels), "le"), true
		}
		return f, f.Labels, true
	}
	return metricdoc.Family{}, nil, false
}

// queryProblems lists what is wrong with q: it does not parse, selects no
// metric, names a metric no README documents or a label that metric lacks.
func queryProblems(fams map[string]metricdoc.Family, q query) []string {
	sels, err := parseSelectors(q.expr)
	if err != nil {
		return []string{fmt.Sprintf("%s does not parse: %v\n%s", q.where, err, q.expr)}
	}
	if len(sels) == 0 {
		return []string{fmt.Sprintf("%s selects no metric: %s", q.where, q.expr)}
	}
	var out []string
	for _, s := range sels {
		f, have, ok := family(fams, s.name)
		if !ok {
			out = append(out, fmt.Sprintf("%s: %q is not a documented metric", q.where, s.name))
			continue
		}
		for _, l := range s.labels {
			// A warmroute label may share a target label's name
			// (endpoint): either makes it valid.
			if !slices.Contains(have, l) && !slices.Contains(targetLabels, l) {
				out = append(out, fmt.Sprintf("%s: %s (%s) has no label %q (it has %v)", q.where, s.name, f.Type, l, have))
			}
		}
	}
	return out
}

// TestQueriesParseAndNameDocumentedMetrics: every alert expression and
// dashboard query parses as PromQL, selects metrics by name, and names only
// documented metrics and, for each, only labels that metric carries.
func TestQueriesParseAndNameDocumentedMetrics(t *testing.T) {
	fams := documentedFamilies(t)
	qs := append(ruleQueries(t), dashboardQueries(t)...)
	for _, q := range qs {
		for _, p := range queryProblems(fams, q) {
			t.Error(p)
		}
	}
	t.Logf("%d queries checked against %d documented metrics", len(qs), len(fams))
}

// TestQueryChecksCatchMistakes: queryProblems reports a query that does not
// parse, names an unknown metric or a label the metric lacks.
func TestQueryChecksCatchMistakes(t *testing.T) {
	fams := documentedFamilies(t)
	cases := []struct{ name, expr, want string }{
		{"good", `sum by (ending, job) (rate(warmroute_ttl_endings_total{ending="confirmed"}[5m]))`, ""},
		{"histogram bucket", `histogram_quantile(0.9, sum by (le) (rate(warmroute_extproc_decision_duration_seconds_bucket[5m])))`, ""},
		{"unbalanced", `sum(rate(warmroute_ttl_endings_total[5m])`, "does not parse"},
		{"no selector", `vector(1)`, "selects no metric"},
		{"misspelt metric", `rate(warmroute_ttl_ending_total[5m])`, "not a documented metric"},
		{"matcher label the metric lacks", `warmroute_ttl_endings_total{result="hit"}`, `no label "result"`},
		{"by label the metric lacks", `sum by (outcome) (rate(warmroute_ttl_endings_total[5m]))`, `no label "outcome"`},
		{"bucket of a gauge", `warmroute_ttl_current_seconds_bucket`, "not a documented metric"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := strings.Join(queryProblems(fams, query{where: c.name, expr: c.expr}), "\n")
			if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Errorf("problems %q, want one with %q", got, c.want)
			}
		})
	}
}

// referencedMetrics lists the metric families the alerts and the dashboard
// query.
func referencedMetrics(t *testing.T) []string {
	t.Helper()
	return familiesOf(t, append(ruleQueries(t), dashboardQueries(t)...))
}

// familiesOf lists the metric families qs select, from their parsed
// selectors, with histogram series folded into their documented family.
func familiesOf(t *testing.T, qs []query) []string {
	t.Helper()
	fams := documentedFamilies(t)
	var names []string
	for _, q := range qs {
		for _, s := range selectors(t, q) {
			if f, _, ok := family(fams, s.name); ok {
				s.name = f.Name
			}
			names = append(names, s.name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}
