package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/common/promslog"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/rules"
	"sigs.k8s.io/yaml"
)

// Alert rules are unit-tested from files in promtool's rule-test format
// (testdata/*.rules-test.yaml; `promtool test rules FILE` runs them as
// they are). This runner evaluates them the way promtool does, with
// Prometheus's own series loader, query engine and rule groups: series are
// appended up to each evaluation step, every group is evaluated at each
// step of evaluation_interval from time 0, and at each eval_time the
// firing alerts (labels and expanded annotations) must equal exp_alerts.

// ruleTestFile is the part of promtool's test file format the chart uses;
// files are decoded strictly, so they use nothing else.
type ruleTestFile struct {
	RuleFiles          []string        `json:"rule_files"`
	EvaluationInterval string          `json:"evaluation_interval,omitempty"`
	Tests              []ruleTestGroup `json:"tests"`
}

type ruleTestGroup struct {
	Name        string `json:"name,omitempty"`
	Interval    string `json:"interval"`
	InputSeries []struct {
		Series string `json:"series"`
		Values string `json:"values"`
	} `json:"input_series"`
	AlertRuleTests []alertRuleTest `json:"alert_rule_test"`
}

type alertRuleTest struct {
	EvalTime  string `json:"eval_time"`
	Alertname string `json:"alertname"`
	ExpAlerts []struct {
		ExpLabels      map[string]string `json:"exp_labels"`
		ExpAnnotations map[string]string `json:"exp_annotations"`
	} `json:"exp_alerts"`
}

func mustDuration(t *testing.T, s, def string) time.Duration {
	t.Helper()
	if s == "" {
		s = def
	}
	d, err := model.ParseDuration(s)
	if err != nil {
		t.Fatalf("duration %q: %v", s, err)
	}
	return time.Duration(d)
}

// loadString is the series as promqltest's load command, as promtool
// builds it.
func (g ruleTestGroup) loadString(interval time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "load %s\n", model.Duration(interval))
	for _, s := range g.InputSeries {
		fmt.Fprintf(&b, "  %s %s\n", s.Series, s.Values)
	}
	return b.String()
}

// alertState is one firing alert: its labels and annotations, printed.
type alertState struct{ labels, annotations string }

// firing lists the firing alerts of the named rule in every group, sorted.
func firing(groups map[string]*rules.Group, name string) []alertState {
	var out []alertState
	for _, g := range groups {
		for _, r := range g.Rules() {
			ar, ok := r.(*rules.AlertingRule)
			if !ok || ar.Name() != name {
				continue
			}
			for _, a := range ar.ActiveAlerts() {
				if a.State == rules.StateFiring {
					out = append(out, alertState{a.Labels.String(), a.Annotations.String()})
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b alertState) int { return strings.Compare(a.labels+a.annotations, b.labels+b.annotations) })
	return out
}

func (c alertRuleTest) want() []alertState {
	var out []alertState
	for _, a := range c.ExpAlerts {
		ls := map[string]string{labels.AlertName: c.Alertname}
		for k, v := range a.ExpLabels {
			ls[k] = v
		}
		out = append(out, alertState{labels.FromMap(ls).String(), labels.FromMap(a.ExpAnnotations).String()})
	}
	slices.SortFunc(out, func(a, b alertState) int { return strings.Compare(a.labels+a.annotations, b.labels+b.annotations) })
	return out
}

// runRuleTestGroup evaluates one test group against ruleFiles and returns
// the alert tests that do not match, as messages, and the names of the
// alerts it tested.
func runRuleTestGroup(t *testing.T, g ruleTestGroup, every time.Duration, ruleFiles []string) (failures []string, tested []string) {
	t.Helper()
	interval := mustDuration(t, g.Interval, "1m")
	ll, err := promqltest.NewLazyLoader(g.loadString(interval), promqltest.LazyLoaderOpts{EnableAtModifier: true, EnableNegativeOffset: true})
	if err != nil {
		t.Fatalf("loading series: %v", err)
	}
	defer ll.Close()
	ll.SubqueryInterval = every
	m := rules.NewManager(&rules.ManagerOptions{
		QueryFunc:    rules.EngineQueryFunc(ll.QueryEngine(), ll.Storage()),
		AppendableV2: ll.Storage(),
		Context:      context.Background(),
		NotifyFunc:   func(context.Context, string, ...*rules.Alert) {},
		Logger:       promslog.NewNopLogger(),
	})
	groups, errs := m.LoadGroups(every, labels.EmptyLabels(), "", nil, false, ruleFiles...)
	if len(errs) > 0 {
		t.Fatalf("loading rules: %v", errs)
	}
	byTime := map[time.Duration][]alertRuleTest{}
	var last time.Duration
	for _, c := range g.AlertRuleTests {
		at := mustDuration(t, c.EvalTime, "0s")
		byTime[at] = append(byTime[at], c)
		last = max(last, at)
		tested = append(tested, c.Alertname)
	}
	for _, gr := range groups {
		for _, r := range gr.Rules() {
			if ar, ok := r.(*rules.AlertingRule); ok {
				ar.SetRestored(true)
			}
		}
	}
	start := time.Unix(0, 0).UTC()
	for ts := time.Duration(0); ts <= last; ts += every {
		ll.WithSamplesTill(start.Add(ts), func(err error) {
			if err != nil {
				t.Fatalf("appending samples: %v", err)
			}
			for _, gr := range groups {
				gr.Eval(ll.Context(), start.Add(ts))
				for _, r := range gr.Rules() {
					if r.LastError() != nil {
						t.Fatalf("rule %s at %v: %v", r.Name(), ts, r.LastError())
					}
				}
			}
		})
		for at, cases := range byTime {
			if at < ts || at >= ts+every {
				continue
			}
			for _, c := range cases {
				got, want := firing(groups, c.Alertname), c.want()
				if !slices.Equal(got, want) {
					failures = append(failures, fmt.Sprintf("%s at %s:\n got  %v\n want %v", c.Alertname, c.EvalTime, got, want))
				}
			}
		}
	}
	return failures, tested
}

// ruleTests runs one promtool rule-test file.
func ruleTests(t *testing.T, path string) (failures, tested []string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f ruleTestFile
	if err := yaml.UnmarshalStrict(raw, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var files []string
	for _, rf := range f.RuleFiles {
		files = append(files, filepath.Join(filepath.Dir(path), rf))
	}
	every := mustDuration(t, f.EvaluationInterval, "1m")
	for _, g := range f.Tests {
		fl, ts := runRuleTestGroup(t, g, every, files)
		for _, msg := range fl {
			failures = append(failures, g.Name+": "+msg)
		}
		tested = append(tested, ts...)
	}
	return failures, tested
}

// alertNames lists the alerts files/alerts.yaml defines.
func alertNames(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, q := range ruleQueries(t) {
		_, name, _ := strings.Cut(q.where, "/")
		names = append(names, name)
	}
	return names
}

// TestAlertRules runs testdata/alerts.rules-test.yaml against the chart's
// alerts: each alert fires, with its description, on series that should
// fire it, and stays quiet on series that should not.
func TestAlertRules(t *testing.T) {
	failures, tested := ruleTests(t, filepath.Join("testdata", "alerts.rules-test.yaml"))
	for _, f := range failures {
		t.Error(f)
	}
	for _, name := range alertNames(t) {
		if !slices.Contains(tested, name) {
			t.Errorf("alert %s has no rule test in testdata/alerts.rules-test.yaml", name)
		}
	}
}

// TestAlertRuleRunnerFails: the runner reports an alert that fires when
// the test expects none, and a description that differs from the
// expected one (so TestAlertRules cannot pass on a runner that compares
// nothing).
func TestAlertRuleRunnerFails(t *testing.T) {
	failures, _ := ruleTests(t, filepath.Join("testdata", "wrong.rules-test.yaml"))
	if len(failures) != 2 {
		t.Fatalf("want 2 failures (an unexpected alert, a wrong description), got %d: %v", len(failures), failures)
	}
	for i, want := range []string{"got  [{", "3.333%"} {
		if !strings.Contains(failures[i], want) {
			t.Errorf("failure %d does not mention %q: %s", i, want, failures[i])
		}
	}
}
