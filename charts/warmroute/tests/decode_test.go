package tests

import (
	"fmt"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	giev1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"
	"sigs.k8s.io/yaml"
)

// strictDecoders maps apiVersion/kind to a strict decode into the real Go
// type: unknown or duplicate fields and wrong value types are errors.
var strictDecoders = map[string]func([]byte) error{
	"v1/ConfigMap":                             strict[corev1.ConfigMap],
	"v1/Secret":                                strict[corev1.Secret],
	"v1/Service":                               strict[corev1.Service],
	"v1/ServiceAccount":                        strict[corev1.ServiceAccount],
	"apps/v1/Deployment":                       strict[appsv1.Deployment],
	"apps/v1/StatefulSet":                      strict[appsv1.StatefulSet],
	"policy/v1/PodDisruptionBudget":            strict[policyv1.PodDisruptionBudget],
	"rbac.authorization.k8s.io/v1/Role":        strict[rbacv1.Role],
	"rbac.authorization.k8s.io/v1/RoleBinding": strict[rbacv1.RoleBinding],
	"monitoring.coreos.com/v1/ServiceMonitor":  strict[monitoringv1.ServiceMonitor],
	"monitoring.coreos.com/v1/PodMonitor":      strict[monitoringv1.PodMonitor],
	"monitoring.coreos.com/v1/PrometheusRule":  strict[monitoringv1.PrometheusRule],
	// The Gateway API Inference Extension's own v1 types (the envtest suite
	// also creates the pool under GIE's CRD).
	"inference.networking.k8s.io/v1/InferencePool": strict[giev1.InferencePool],
}

func strict[T any](raw []byte) error {
	var v T
	return yaml.UnmarshalStrict(raw, &v)
}

func decodeStrict(d doc) error {
	dec, ok := strictDecoders[d.APIVersion+"/"+d.Kind]
	if !ok {
		return fmt.Errorf("%s: no Go type registered for this kind", d)
	}
	if err := dec(d.Raw); err != nil {
		return fmt.Errorf("%s: %w", d, err)
	}
	return nil
}

func TestRenderedDocumentsDecodeStrictly(t *testing.T) {
	for _, vs := range valueSets {
		t.Run(vs.name, func(t *testing.T) {
			docs := render(t, vs.vals)
			if len(docs) == 0 {
				t.Fatal("nothing rendered")
			}
			for _, d := range docs {
				if err := decodeStrict(d); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// The decoders must reject what the API server would: a misspelt field, a
// string where a number belongs, an unknown kind.
func TestDecodeStrictRejects(t *testing.T) {
	cases := []struct{ name, yaml string }{
		{"unknown field", "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {portz: []}\n"},
		{"wrong type", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replicas: two}\n"},
		{"duplicate field", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\nmetadata: {name: y}\n"},
		{"unknown kind", "apiVersion: v1\nkind: Pod2\nmetadata: {name: x}\n"},
		{"unknown monitor field", "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: x}\nspec: {endpoints: [{prot: admin}]}\n"},
		{"pool without selector type", "apiVersion: inference.networking.k8s.io/v1\nkind: InferencePool\nmetadata: {name: x}\nspec: {selector: {app: vllm}}\n"},
		{"pool with pre-v1 portNumber", "apiVersion: inference.networking.k8s.io/v1\nkind: InferencePool\nmetadata: {name: x}\nspec: {endpointPickerRef: {name: wr, portNumber: 9002}}\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			docs, err := splitDocs(c.yaml)
			if err != nil {
				t.Fatal(err)
			}
			if len(docs) != 1 {
				t.Fatalf("got %d documents", len(docs))
			}
			if err := decodeStrict(docs[0]); err == nil {
				t.Error("decoded without error")
			}
		})
	}
}
