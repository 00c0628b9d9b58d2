package tests

import (
	"fmt"
	"maps"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// What the API server accepts can still be a broken install: a mount of a
// volume that is not there, a probe on an unnamed port, a Service selecting
// no pods, a ConfigMap that was never rendered. These checks catch those.
func TestRenderedReferencesResolve(t *testing.T) {
	for _, vs := range valueSets {
		t.Run(vs.name, func(t *testing.T) {
			docs := render(t, vs.vals)
			pods := podTemplates(t, docs)
			for name, pod := range pods {
				for _, err := range podSpecErrors(pod.Spec, docs) {
					t.Errorf("%s: %v", name, err)
				}
			}
			for _, d := range docs {
				if d.Kind != "Service" {
					continue
				}
				svc := decodeInto[corev1.Service](t, d)
				if !selectsSome(svc.Spec.Selector, pods) {
					t.Errorf("Service %s selects no rendered pod (selector %v)", svc.Name, svc.Spec.Selector)
				}
			}
		})
	}
}

func podTemplates(t *testing.T, docs []doc) map[string]corev1.PodTemplateSpec {
	out := map[string]corev1.PodTemplateSpec{}
	for _, d := range docs {
		switch d.Kind {
		case "Deployment":
			out[d.String()] = decodeInto[appsv1.Deployment](t, d).Spec.Template
		case "StatefulSet":
			out[d.String()] = decodeInto[appsv1.StatefulSet](t, d).Spec.Template
		}
	}
	return out
}

func selectsSome(sel map[string]string, pods map[string]corev1.PodTemplateSpec) bool {
	for pod := range maps.Values(pods) {
		if labels.SelectorFromSet(sel).Matches(labels.Set(pod.Labels)) {
			return true
		}
	}
	return false
}

// podSpecErrors lists mounts without volumes, probes on unknown named ports
// and chart-owned ConfigMaps that were not rendered.
func podSpecErrors(spec corev1.PodSpec, docs []doc) []error {
	var errs []error
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
		if cm := v.ConfigMap; cm != nil && isChartOwned(cm.Name) && !hasDoc(docs, "ConfigMap", cm.Name) {
			errs = append(errs, fmt.Errorf("volume %s: ConfigMap %s is not rendered", v.Name, cm.Name))
		}
	}
	for _, c := range append(spec.InitContainers, spec.Containers...) {
		for _, vm := range c.VolumeMounts {
			if _, ok := volumes[vm.Name]; !ok && !isClaimTemplate(vm.Name) {
				errs = append(errs, fmt.Errorf("container %s mounts missing volume %s", c.Name, vm.Name))
			}
		}
		errs = append(errs, probePortErrors(c)...)
	}
	return errs
}

func probePortErrors(c corev1.Container) []error {
	named := map[string]bool{}
	for _, p := range c.Ports {
		named[p.Name] = true
	}
	var errs []error
	for _, p := range []*corev1.Probe{c.StartupProbe, c.LivenessProbe, c.ReadinessProbe} {
		if p == nil {
			continue
		}
		var port string
		switch {
		case p.HTTPGet != nil:
			port = p.HTTPGet.Port.StrVal
		case p.TCPSocket != nil:
			port = p.TCPSocket.Port.StrVal
		}
		if port != "" && !named[port] {
			errs = append(errs, fmt.Errorf("container %s probes unknown port %q", c.Name, port))
		}
	}
	return errs
}

func isChartOwned(name string) bool { return len(name) > 3 && name[:3] == releaseName+"-" }

// isClaimTemplate: the NATS StatefulSet's data volume comes from its claim template.
func isClaimTemplate(name string) bool { return name == "data" }
