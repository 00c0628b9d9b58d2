package tests

import (
	"testing"

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
