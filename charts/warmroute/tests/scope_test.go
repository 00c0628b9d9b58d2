package tests

import (
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

// TestEveryObjectIsInTheReleaseNamespace: every rendered object names the
// release's namespace, so `helm template | kubectl apply` and GitOps tools
// put it where `helm install -n` would.
func TestEveryObjectIsInTheReleaseNamespace(t *testing.T) {
	for _, vs := range valueSets {
		t.Run(vs.name, func(t *testing.T) {
			for _, d := range render(t, vs.vals) {
				var meta struct {
					Metadata struct {
						Namespace string `json:"namespace"`
					} `json:"metadata"`
				}
				if err := yaml.Unmarshal(d.Raw, &meta); err != nil {
					t.Fatalf("%s: %v", d, err)
				}
				if meta.Metadata.Namespace != namespace {
					t.Errorf("%s has namespace %q, want the release's %q", d, meta.Metadata.Namespace, namespace)
				}
			}
		})
	}
}

// TestDisruptionBudgetAllowsDrains: a budget that would keep every replica
// blocks every eviction; with one replica the budget lets one go instead.
func TestDisruptionBudgetAllowsDrains(t *testing.T) {
	tests := []struct {
		name     string
		replicas int
		wantMin  bool // minAvailable kept; otherwise maxUnavailable 1
	}{
		{"one replica", 1, false},
		{"two replicas", 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs := render(t, m{"router": m{"replicaCount": tt.replicas}})
			pdb := decodeInto[policyv1.PodDisruptionBudget](t, find(t, docs, "PodDisruptionBudget", releaseName+"-warmroute-router"))
			if got := pdb.Spec.MinAvailable != nil; got != tt.wantMin {
				t.Fatalf("minAvailable set = %v, want %v (spec %+v)", got, tt.wantMin, pdb.Spec)
			}
			if !tt.wantMin && (pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1) {
				t.Fatalf("one replica: maxUnavailable %v, want 1", pdb.Spec.MaxUnavailable)
			}
		})
	}
}
