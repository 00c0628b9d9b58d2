package envtest

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/releaseutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	giev1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"
	"sigs.k8s.io/yaml"

	"github.com/warmroute/warmroute/inferencepool"
)

// chartValues is the chart's InferencePool mode.
var chartValues = map[string]any{
	"envoy":         map[string]any{"mode": "none"},
	"inferencePool": map[string]any{"enabled": true},
}

// rendered is the chart's output for one namespace, by kind.
type rendered map[string][]*unstructured.Unstructured

// one returns the only rendered object of kind.
func (r rendered) one(t *testing.T, kind string) *unstructured.Unstructured {
	t.Helper()
	if len(r[kind]) != 1 {
		t.Fatalf("the chart rendered %d %s objects, want 1", len(r[kind]), kind)
	}
	return r[kind][0].DeepCopy()
}

// renderChart renders charts/warmroute with chartValues into ns through the
// Helm SDK, as `helm template --namespace ns` does.
func renderChart(t *testing.T, ns string) rendered {
	t.Helper()
	chrt, err := loader.Load(filepath.Join(suiteDir(), "..", "..", "charts", "warmroute"))
	if err != nil {
		t.Fatalf("loading the chart: %v", err)
	}
	install := action.NewInstall(&action.Configuration{
		KubeClient:   &kubefake.PrintingKubeClient{Out: io.Discard},
		Capabilities: chartutil.DefaultCapabilities,
		Log:          func(string, ...any) {},
	})
	install.DryRun, install.ClientOnly = true, true
	install.ReleaseName, install.Namespace = "wr", ns
	install.KubeVersion = &chartutil.KubeVersion{Version: "v" + kubeVersion, Major: "1", Minor: "37"}
	rel, err := install.Run(chrt, chartValues)
	if err != nil {
		t.Fatalf("rendering the chart: %v", err)
	}
	out := rendered{}
	for _, doc := range releaseutil.SplitManifests(rel.Manifest) {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("parsing a rendered object: %v\n%s", err, doc)
		}
		if obj == nil {
			continue // a template that rendered only comments
		}
		u := &unstructured.Unstructured{Object: obj}
		out[u.GetKind()] = append(out[u.GetKind()], u)
	}
	return out
}

// resources maps the kinds the suite creates to their resources.
var resources = map[string]schema.GroupVersionResource{
	"ServiceAccount": {Version: "v1", Resource: "serviceaccounts"},
	"Role":           {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	"RoleBinding":    {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
	"InferencePool":  inferencepool.GVR,
}

// create creates u with strict field validation: a field the API's schema
// does not know is an error, not silently dropped.
func create(ctx context.Context, dyn dynamic.Interface, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	gvr, ok := resources[u.GetKind()]
	if !ok {
		return nil, fmt.Errorf("no resource known for kind %s", u.GetKind())
	}
	return dyn.Resource(gvr).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{FieldValidation: "Strict"})
}

// installChart creates the chart's ServiceAccount, Role, RoleBinding and
// InferencePool in ns through the API server and returns them as rendered.
func installChart(t *testing.T, adm clients, ns string) rendered {
	t.Helper()
	r := renderChart(t, ns)
	for _, kind := range []string{"ServiceAccount", "Role", "RoleBinding", "InferencePool"} {
		if _, err := create(context.Background(), adm.dyn, r.one(t, kind)); err != nil {
			t.Fatalf("creating the chart's %s: %v", kind, err)
		}
	}
	return r
}

// TestChartInferencePoolIsValid: the chart's rendered InferencePool decodes
// strictly into GIE's own v1 Go types and is accepted by the API server under
// GIE's own v1 CRD with strict field validation, and reads back with the
// API's defaults; the shapes the v1 API does not have, or forbids, are
// refused, so the acceptance means something.
func TestChartInferencePoolIsValid(t *testing.T) {
	adm := newClients(t, admin(t))
	ns := namespace(t, adm.kube)
	pool := renderChart(t, ns).one(t, "InferencePool")
	raw, err := yaml.Marshal(pool.Object)
	if err != nil {
		t.Fatal(err)
	}
	var typed giev1.InferencePool
	if err := yaml.UnmarshalStrict(raw, &typed); err != nil {
		t.Fatalf("the chart's InferencePool does not decode strictly into %s/api/v1: %v\n%s", gieModule, err, raw)
	}
	if ref := typed.Spec.EndpointPickerRef; ref == nil || ref.Port == nil || ref.Port.Number != 9002 || ref.Name == "" {
		t.Errorf("typed endpointPickerRef %+v, want the router's Service on port 9002", ref)
	}
	got, err := create(context.Background(), adm.dyn, pool)
	if err != nil {
		t.Fatalf("the API server refused the chart's InferencePool: %v", err)
	}
	ref, _, _ := unstructured.NestedMap(got.Object, "spec", "endpointPickerRef")
	port, _, _ := unstructured.NestedInt64(ref, "port", "number")
	if ref["group"] != "" || ref["kind"] != "Service" || ref["failureMode"] != "FailClose" || port != 9002 {
		t.Errorf("endpointPickerRef read back as %v, want group \"\", kind Service, failureMode FailClose, port.number 9002", ref)
	}

	for i, tc := range []struct {
		name   string
		mutate func(spec map[string]any)
		want   string
	}{
		{"pre-v1 portNumber", func(s map[string]any) {
			ref := s["endpointPickerRef"].(map[string]any)
			delete(ref, "port")
			ref["portNumber"] = int64(9002)
		}, `unknown field "spec.endpointPickerRef.portNumber"`},
		{"service without port", func(s map[string]any) {
			delete(s["endpointPickerRef"].(map[string]any), "port")
		}, "port is required when kind is 'Service'"},
		{"no target port", func(s map[string]any) { s["targetPorts"] = []any{} }, "spec.targetPorts"},
		{"a target port twice", func(s map[string]any) {
			s["targetPorts"] = []any{map[string]any{"number": int64(8000)}, map[string]any{"number": int64(8000)}}
		}, "port number must be unique"},
		{"nine target ports", func(s map[string]any) {
			var ports []any
			for p := range 9 {
				ports = append(ports, map[string]any{"number": int64(8000 + p)})
			}
			s["targetPorts"] = ports
		}, "spec.targetPorts"},
		{"port out of range", func(s map[string]any) { s["targetPorts"] = []any{map[string]any{"number": int64(70000)}} }, "spec.targetPorts[0].number"},
		{"empty selector", func(s map[string]any) { s["selector"] = map[string]any{"matchLabels": map[string]any{}} }, "spec.selector.matchLabels"},
		{"unknown failure mode", func(s map[string]any) {
			s["endpointPickerRef"].(map[string]any)["failureMode"] = "FailSoft"
		}, "spec.endpointPickerRef.failureMode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := pool.DeepCopy()
			bad.SetName(fmt.Sprintf("bad-%d", i))
			spec, _, _ := unstructured.NestedMap(bad.Object, "spec")
			tc.mutate(spec)
			if err := unstructured.SetNestedMap(bad.Object, spec, "spec"); err != nil {
				t.Fatal(err)
			}
			_, err := create(context.Background(), adm.dyn, bad)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("create = %v, want an error naming %q", err, tc.want)
			}
		})
	}
}
