package envtest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/warmroute/warmroute/internal/testwait"
)

// counted sums the samples of counter family name whose labels include
// every name/value pair of match.
func counted(t *testing.T, reg *prometheus.Registry, name string, match ...string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			ok := true
			for i := 0; i+1 < len(match); i += 2 {
				ok = ok && labels[match[i]] == match[i+1]
			}
			if ok {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

// withoutVerb returns the Role with verb removed from the rule on resource
// (the whole rule when verb is "").
func withoutVerb(t *testing.T, role *unstructured.Unstructured, resource, verb string) *unstructured.Unstructured {
	t.Helper()
	role = role.DeepCopy()
	rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
	var kept []any
	found := false
	for _, r := range rules {
		rule := r.(map[string]any)
		res, _, _ := unstructured.NestedStringSlice(rule, "resources")
		if !slices.Contains(res, resource) {
			kept = append(kept, rule)
			continue
		}
		found = true
		if verb == "" {
			continue
		}
		verbs, _, _ := unstructured.NestedStringSlice(rule, "verbs")
		if !slices.Contains(verbs, verb) {
			t.Fatalf("the chart's Role does not grant %s on %s", verb, resource)
		}
		verbs = slices.DeleteFunc(verbs, func(v string) bool { return v == verb })
		if err := unstructured.SetNestedStringSlice(rule, verbs, "verbs"); err != nil {
			t.Fatal(err)
		}
		kept = append(kept, rule)
	}
	if !found {
		t.Fatalf("the chart's Role has no rule on %s", resource)
	}
	if err := unstructured.SetNestedSlice(role.Object, kept, "rules"); err != nil {
		t.Fatal(err)
	}
	return role
}

// TestFewerPermissions takes one permission at a time away from the chart's
// Role. Without watch on either resource the watcher never syncs (the router
// stays unready) and says why: the forbidden request is logged, counted by
// resource in warmroute_inferencepool_watch_errors_total{reason="forbidden"}
// and named in Run's error. Without get, or without list, it still syncs
// and follows the pods on this API server: nothing gets single objects, and
// the informers stream their initial list over the watch (WatchList, on by
// default since Kubernetes 1.34); list is what they fall back to on servers
// without it.
func TestFewerPermissions(t *testing.T) {
	adm := newClients(t, admin(t))
	for _, tc := range []struct {
		name, resource, verb string
		syncs                bool
	}{
		{"pods without watch", "pods", "watch", false},
		{"inferencepools without watch", "inferencepools", "watch", false},
		{"no pods rule", "pods", "", false},
		{"no inferencepools rule", "inferencepools", "", false},
		{"pods without list", "pods", "list", true},
		{"inferencepools without list", "inferencepools", "list", true},
		{"pods without get", "pods", "get", true},
		{"inferencepools without get", "inferencepools", "get", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := namespace(t, adm.kube)
			chart := renderChart(t, ns)
			objs := []*unstructured.Unstructured{chart.one(t, "ServiceAccount"),
				withoutVerb(t, chart.one(t, "Role"), tc.resource, tc.verb),
				chart.one(t, "RoleBinding"), chart.one(t, "InferencePool")}
			for _, o := range objs {
				if _, err := create(context.Background(), adm.dyn, o); err != nil {
					t.Fatalf("creating %s: %v", o.GetKind(), err)
				}
			}
			a := podSpec{name: "a", ip: "192.0.2.1", labels: map[string]string{"app": "vllm"}, ready: true}
			addPod(t, adm, ns, a)
			sa := newClients(t, serviceAccount(t, adm, ns, chart.one(t, "ServiceAccount").GetName()))
			rs := newRouterState(t)
			w := watch(t, sa, ns, chart.one(t, "InferencePool").GetName(), rs)
			if tc.syncs {
				w.synced(t)
				waitCandidates(t, rs, "192.0.2.1:8000")
				a.ready = false
				setReady(t, adm, ns, a) // changes still arrive
				waitCandidates(t, rs)
				if n := counted(t, w.reg, "warmroute_inferencepool_watch_errors_total"); n != 0 {
					t.Errorf("%v list/watch failures:\n%s", n, w.logs)
				}
				return
			}
			forbidden(t, w, rs, tc.resource)
		})
	}
}

// forbidden checks that w, denied resource, reports it and never syncs.
func forbidden(t *testing.T, w *running, rs routerState, resource string) {
	t.Helper()
	testwait.Until(t, time.Minute, func() string {
		if counted(t, w.reg, "warmroute_inferencepool_watch_errors_total", "resource", resource, "reason", "forbidden") == 0 {
			return "no forbidden " + resource + " failure counted yet"
		}
		return ""
	})
	time.Sleep(2 * time.Second) // a sync, if it were to come, has had its chance
	select {
	case <-w.w.Synced():
		t.Fatalf("synced without the permission; candidates %v", rs.candidates())
	default:
	}
	if !strings.Contains(w.logs.String(), "cannot list or watch") || !strings.Contains(w.logs.String(), "reason=forbidden") {
		t.Errorf("the forbidden request was not logged:\n%s", w.logs)
	}
	w.stop()
	err := <-w.done
	w.done <- err // for the cleanup
	if err == nil || !strings.Contains(err.Error(), "forbidden") || !strings.Contains(err.Error(), resource) {
		t.Errorf("Run = %v, want the forbidden %s request named", err, resource)
	}
	if got := rs.candidates(); len(got) != 0 {
		t.Errorf("candidates %v without the permission, want none", got)
	}
}
