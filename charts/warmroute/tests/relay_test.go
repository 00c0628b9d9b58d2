package tests

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// relaySnippet returns the relay container the chart renders for
// model-server pods.
func relaySnippet(t *testing.T, docs []doc) corev1.Container {
	t.Helper()
	cm := decodeInto[corev1.ConfigMap](t, find(t, docs, "ConfigMap", releaseName+"-warmroute-relay-sidecar"))
	cs := decodeContainers(t, cm.Data["containers.yaml"])
	if len(cs) != 1 || cs[0].Name != "warmroute-relay" {
		t.Fatalf("relay snippet: want one warmroute-relay container, got %d", len(cs))
	}
	return cs[0]
}

// The relay sidecar has liveness and readiness probes on its admin port's
// /healthz, in the ConfigMap snippet and in the example vLLM Deployment.
func TestRelayProbes(t *testing.T) {
	docs := render(t, m{"nats": m{"mode": "embedded"}, "relay": m{"adminPort": 9191}, "examples": m{"vllm": m{"enabled": true}}})
	snippet := relaySnippet(t, docs)
	vllm := container(t, docs, releaseName+"-warmroute-vllm", "warmroute-relay")
	for _, c := range []corev1.Container{snippet, vllm} {
		if len(c.Ports) != 1 || c.Ports[0].ContainerPort != 9191 {
			t.Fatalf("relay ports %+v, want the admin port 9191", c.Ports)
		}
		for kind, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
			if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" || p.HTTPGet.Port.String() != c.Ports[0].Name {
				t.Errorf("relay %s probe %+v, want GET /healthz on port %s", kind, p, c.Ports[0].Name)
			}
		}
	}
}

// The example simulators carry the relay sidecar (and announce themselves);
// without NATS or with relays off nothing would announce them, so the chart
// refuses to render them (TestUnroutableInstallFails).
func TestExampleSimRelay(t *testing.T) {
	name := releaseName + "-warmroute-sim"
	cases := []struct {
		name      string
		vals      map[string]any
		wantRelay bool
		wantCreds bool
	}{
		{"embedded NATS", m{"nats": m{"mode": "embedded"}, "examples": m{"sim": m{"enabled": true}}}, true, false},
		{"external NATS with credentials", m{"nats": m{"mode": "external", "external": m{"url": "nats://n:4222", "existingSecret": "creds"}},
			"examples": m{"sim": m{"enabled": true}}}, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pod := decodeInto[appsv1.Deployment](t, find(t, render(t, c.vals), "Deployment", name)).Spec.Template.Spec
			var relay *corev1.Container
			for i := range pod.Containers {
				if pod.Containers[i].Name == "warmroute-relay" {
					relay = &pod.Containers[i]
				}
			}
			if (relay != nil) != c.wantRelay {
				t.Fatalf("relay container present %v, want %v", relay != nil, c.wantRelay)
			}
			if relay != nil && relay.ReadinessProbe == nil {
				t.Error("the sim's relay has no readiness probe")
			}
			if got := len(pod.Volumes) == 1 && pod.Volumes[0].Secret != nil && pod.Volumes[0].Secret.SecretName == "creds"; got != c.wantCreds {
				t.Errorf("volumes %+v, want the NATS credentials mounted: %v", pod.Volumes, c.wantCreds)
			}
		})
	}
}
