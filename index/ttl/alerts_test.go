package ttl

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/internal/metricdoc"
	"sigs.k8s.io/yaml"
)

type ruleFile struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Alert       string            `json:"alert"`
			Expr        string            `json:"expr"`
			For         string            `json:"for"`
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"rules"`
	} `json:"groups"`
}

// registeredNames lists the metric names a controller registers, from the
// collectors' descriptors.
func registeredNames(t *testing.T) map[string]bool {
	t.Helper()
	fams, err := metricdoc.Registered(func(reg prometheus.Registerer) error {
		_, err := NewMetrics(reg)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for name := range fams {
		names[name] = true
	}
	return names
}

// TestAlertRules checks the rules' shape and that the metrics they name are
// this package's. The chart's test module (charts/warmroute/tests) parses
// the same rules with the PromQL parser and unit-tests each alert's firing
// and annotations; Prometheus stays out of this module.
func TestAlertRules(t *testing.T) {
	b, err := os.ReadFile("alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f ruleFile
	if err := yaml.UnmarshalStrict(b, &f); err != nil {
		t.Fatalf("parsing alerts.yaml: %v", err)
	}
	names := registeredNames(t)
	metricRef := regexp.MustCompile(`\bwarmroute_[a-z0-9_]+`)
	histSuffix := regexp.MustCompile(`_(bucket|sum|count)$`)
	seen := map[string]bool{}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			t.Run(r.Alert, func(t *testing.T) {
				if r.Alert == "" || r.Expr == "" || r.For == "" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" {
					t.Fatalf("rule lacks alert, expr, for, severity or summary: %+v", r)
				}
				refs := metricRef.FindAllString(r.Expr+" "+r.Annotations["description"], -1)
				if len(refs) == 0 {
					t.Fatal("rule references no warmroute metric")
				}
				for _, ref := range refs {
					if !names[ref] && !names[histSuffix.ReplaceAllString(ref, "")] {
						t.Errorf("%s is not a metric this package registers", ref)
					}
					seen[ref] = true
				}
			})
		}
	}
	// The three TTL alerts: late confirmations, stale expiries, backlog.
	for _, must := range []string{"warmroute_ttl_endings_total", "warmroute_ttl_backlog_slack_ratio"} {
		if !seen[must] {
			t.Errorf("no alert on %s", must)
		}
	}
}

// TestMetricNames checks the naming conventions of everything registered.
func TestMetricNames(t *testing.T) {
	for name := range registeredNames(t) {
		if !strings.HasPrefix(name, "warmroute_ttl_") {
			t.Errorf("%s lacks the warmroute_ttl_ prefix", name)
		}
	}
	h := newHarness(t, Config{})
	h.feed(0, "e", "m", referenceLatencies()[:5])
	h.Usage(0, 1, 1, true)
	h.step(h.clk.Now())
	fams, err := h.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetType().String() == "COUNTER" && !strings.HasSuffix(f.GetName(), "_total") {
			t.Errorf("counter %s lacks _total", f.GetName())
		}
	}
}
