package tests

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/warmroute/warmroute/router"
)

// In InferencePool mode the router follows the pool it fronts: the first
// pool takes the InferencePool's ready pods as members, the router gets its
// service account token and a read-only Role on pods and inferencepools in
// the release namespace; otherwise none of that is rendered.
func TestInferencePoolDiscovery(t *testing.T) {
	docs := render(t, m{"envoy": m{"mode": "none"}, "inferencePool": m{"enabled": true}})
	cfg, err := router.Parse([]byte(renderedServeConfig(t, docs)), "serve.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if want := namespace + "/" + releaseName + "-warmroute"; cfg.Pools[0].InferencePool != want {
		t.Errorf("pools[0].inferencePool = %q, want %q", cfg.Pools[0].InferencePool, want)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("rendered config invalid: %v", err)
	}
	find(t, docs, "InferencePool", releaseName+"-warmroute")
	role := decodeInto[rbacv1.Role](t, find(t, docs, "Role", releaseName+"-warmroute-router"))
	if role.Namespace != namespace {
		t.Errorf("Role namespace %q", role.Namespace)
	}
	want := map[string]string{"pods": "", "inferencepools": "inference.networking.k8s.io"}
	for _, r := range role.Rules {
		for _, res := range r.Resources {
			g, ok := want[res]
			if !ok || !slices.Equal(r.APIGroups, []string{g}) || !slices.Equal(r.Verbs, []string{"get", "list", "watch"}) {
				t.Errorf("unexpected rule %+v", r)
			}
			delete(want, res)
		}
	}
	if len(want) != 0 {
		t.Errorf("Role lacks %v", want)
	}
	rb := decodeInto[rbacv1.RoleBinding](t, find(t, docs, "RoleBinding", releaseName+"-warmroute-router"))
	if rb.RoleRef.Name != role.Name || len(rb.Subjects) != 1 || rb.Subjects[0].Name != releaseName+"-warmroute" {
		t.Errorf("RoleBinding %+v does not bind the router's service account to the Role", rb)
	}
	dep := decodeInto[appsv1.Deployment](t, find(t, docs, "Deployment", releaseName+"-warmroute-router"))
	if a := dep.Spec.Template.Spec.AutomountServiceAccountToken; a == nil || !*a {
		t.Error("the router pod gets no service account token in InferencePool mode")
	}

	named := render(t, m{"envoy": m{"mode": "none"}, "inferencePool": m{"enabled": true, "create": false, "name": "theirs"}})
	cfg, err = router.Parse([]byte(renderedServeConfig(t, named)), "serve.yaml")
	if err != nil || cfg.Pools[0].InferencePool != namespace+"/theirs" {
		t.Errorf("inferencePool.name: pools[0].inferencePool = %q (%v), want %s/theirs", cfg.Pools[0].InferencePool, err, namespace)
	}

	plain := render(t, m{})
	for _, d := range plain {
		if d.Kind == "Role" || d.Kind == "RoleBinding" {
			t.Errorf("%s rendered without InferencePool mode", d)
		}
	}
	dep = decodeInto[appsv1.Deployment](t, find(t, plain, "Deployment", releaseName+"-warmroute-router"))
	if a := dep.Spec.Template.Spec.AutomountServiceAccountToken; a == nil || *a {
		t.Error("the router pod gets a token it does not need")
	}

	_, err = tryRender(chartDir(t), m{"envoy": m{"mode": "none"}, "inferencePool": m{"enabled": true},
		"router": m{"config": m{"pools": []any{m{"name": "p", "endpoints": []any{"10.0.0.1:8000"}}}}}})
	if err == nil || !strings.Contains(err.Error(), "leave router.config.pools[0].endpoints empty") {
		t.Errorf("static endpoints in InferencePool mode: %v, want a refusal", err)
	}
}
