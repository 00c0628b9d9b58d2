package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// dashboard is the part of Grafana's dashboard model the tests read.
type dashboard struct {
	UID    string  `json:"uid"`
	Title  string  `json:"title"`
	Panels []panel `json:"panels"`
}

type panel struct {
	ID      int    `json:"id"`
	Type    string `json:"type"`
	Title   string `json:"title"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
	GridPos struct{ H, W, X, Y int } `json:"gridPos"`
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(chartDir(t), "files", "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("dashboard.json does not parse: %v", err)
	}
	return d
}

// dashboardMetrics lists the metric families the dashboard queries.
func dashboardMetrics(t *testing.T) []string {
	t.Helper()
	return familiesOf(t, dashboardQueries(t))
}

// TestDashboardShape: the dashboard parses, every data panel queries
// something, ids are unique, and it covers what the issue asks to see.
func TestDashboardShape(t *testing.T) {
	d := loadDashboard(t)
	if d.UID == "" || d.Title == "" {
		t.Error("dashboard needs a uid and a title")
	}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d repeated", p.ID)
		}
		ids[p.ID] = true
		if p.Type != "row" && (len(p.Targets) == 0 || p.Targets[0].Expr == "") {
			t.Errorf("panel %q queries nothing", p.Title)
		}
		if p.GridPos.W == 0 || p.GridPos.H == 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("panel %q has no valid position %+v", p.Title, p.GridPos)
		}
	}
	got := dashboardMetrics(t)
	for _, want := range []string{"warmroute_scorer_decisions_total", "warmroute_ttl_speculative_routes_total",
		"warmroute_ttl_confirmation_latency_seconds", "warmroute_ttl_current_seconds", "warmroute_ttl_endings_total",
		"warmroute_ttl_exposure_requests", "warmroute_events_source_event_age_seconds",
		"warmroute_scorer_inflight_requests", "warmroute_extproc_decision_duration_seconds"} {
		if !slices.Contains(got, want) {
			t.Errorf("dashboard does not show %s", want)
		}
	}
}

// TestDashboardConfigMap: the rendered ConfigMap carries the file unchanged.
func TestDashboardConfigMap(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(chartDir(t), "files", "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	docs := render(t, m{"monitoring": m{"dashboard": m{"enabled": true}}})
	cm := decodeInto[corev1.ConfigMap](t, find(t, docs, "ConfigMap", releaseName+"-warmroute-dashboard"))
	if strings.TrimSpace(cm.Data["warmroute.json"]) != strings.TrimSpace(string(raw)) {
		t.Error("rendered dashboard differs from files/dashboard.json")
	}
	if cm.Labels["grafana_dashboard"] != "1" {
		t.Error("dashboard ConfigMap lacks the Grafana sidecar label")
	}
}
