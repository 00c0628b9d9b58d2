package inferencepool

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/warmroute/warmroute/api"
)

// GVR is the InferencePool resource the watcher reads. The pool is read as
// unstructured data, only the two spec fields membership needs, so the
// router does not depend on the module that declares its Go types
// (sigs.k8s.io/gateway-api-inference-extension); the Kubernetes suite
// (internal/envtest) checks these field names against that module's own
// types and CRD.
var GVR = schema.GroupVersionResource{Group: "inference.networking.k8s.io", Version: "v1", Resource: "inferencepools"}

// ErrSpec means an InferencePool's spec lacks what membership needs.
var ErrSpec = errors.New("unusable InferencePool spec")

// spec is the part of an InferencePool's spec that decides membership.
type spec struct {
	selector labels.Selector
	ports    []int64
}

// parseSpec reads spec.selector.matchLabels and spec.targetPorts[].number.
// An empty selector is an error, not "every Pod": the CRD requires one, and
// routing to every Pod of the namespace would be worse than routing nowhere.
func parseSpec(u *unstructured.Unstructured) (spec, error) {
	match, found, err := unstructured.NestedStringMap(u.Object, "spec", "selector", "matchLabels")
	if err != nil || !found || len(match) == 0 {
		return spec{}, fmt.Errorf("%w: spec.selector.matchLabels is missing or empty", ErrSpec)
	}
	ports, found, err := unstructured.NestedSlice(u.Object, "spec", "targetPorts")
	if err != nil || !found || len(ports) == 0 {
		return spec{}, fmt.Errorf("%w: spec.targetPorts is missing or empty", ErrSpec)
	}
	var out spec
	out.selector = labels.SelectorFromSet(match)
	for i, p := range ports {
		m, ok := p.(map[string]any)
		if !ok {
			return spec{}, fmt.Errorf("%w: spec.targetPorts[%d] is not an object", ErrSpec, i)
		}
		n, found, err := unstructured.NestedInt64(m, "number")
		if err != nil || !found || n < 1 || n > 65535 {
			return spec{}, fmt.Errorf("%w: spec.targetPorts[%d].number must be 1-65535", ErrSpec, i)
		}
		out.ports = append(out.ports, n)
	}
	return out, nil
}

// members returns the sorted "ip:port" endpoints of the pods s selects that
// can take traffic: ready, not being deleted, with an IP.
func (s spec) members(pods []*corev1.Pod) []string {
	var out []string
	s.each(pods, func(ep string, _ *corev1.Pod) { out = append(out, ep) })
	slices.Sort(out)
	return slices.Compact(out)
}

// roleLabels returns the api.RoleLabel value of each member whose pod
// carries the label (roles.go).
func (s spec) roleLabels(pods []*corev1.Pod) map[string]string {
	out := map[string]string{}
	s.each(pods, func(ep string, p *corev1.Pod) {
		if v, ok := p.Labels[api.RoleLabel]; ok {
			out[ep] = v
		}
	})
	return out
}

// each calls fn with every member endpoint and its pod.
func (s spec) each(pods []*corev1.Pod, fn func(endpoint string, p *corev1.Pod)) {
	for _, p := range pods {
		if !serving(p) || !s.selector.Matches(labels.Set(p.Labels)) {
			continue
		}
		for _, port := range s.ports {
			fn(net.JoinHostPort(p.Status.PodIP, strconv.FormatInt(port, 10)), p)
		}
	}
}

// serving reports whether a pod takes traffic: it runs, has an IP, is not
// terminating and its Ready condition is true (what EndpointSlices call
// ready).
func serving(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.PodIP == "" || p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
