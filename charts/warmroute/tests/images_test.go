package tests

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

const testDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// images lists every container image of the rendered Deployments and
// StatefulSets.
func images(t *testing.T, docs []doc) []string {
	t.Helper()
	var out []string
	add := func(spec corev1.PodSpec) {
		for _, c := range append(spec.InitContainers, spec.Containers...) {
			out = append(out, c.Image)
		}
	}
	for _, d := range docs {
		switch d.Kind {
		case "Deployment":
			add(decodeInto[appsv1.Deployment](t, d).Spec.Template.Spec)
		case "StatefulSet":
			add(decodeInto[appsv1.StatefulSet](t, d).Spec.Template.Spec)
		}
	}
	return out
}

// TestImagesFullyQualifiedAndPinnable: every image the chart runs names
// its registry, and each image's digest value pins it as tag@digest; a
// malformed digest is refused by the schema.
func TestImagesFullyQualifiedAndPinnable(t *testing.T) {
	base := m{"nats": m{"mode": "embedded"}, "examples": m{"sim": m{"enabled": true}}}
	for _, img := range images(t, render(t, base)) {
		registry, _, ok := strings.Cut(img, "/")
		if !ok || !strings.ContainsAny(registry, ".:") {
			t.Errorf("image %q does not name its registry", img)
		}
		if strings.Contains(img, "@") {
			t.Errorf("image %q pinned without a digest value", img)
		}
	}
	pinned := m{"nats": m{"mode": "embedded", "embedded": m{"image": m{"digest": testDigest}}},
		"examples": m{"sim": m{"enabled": true}},
		"image":    m{"digest": testDigest}, "envoy": m{"image": m{"digest": testDigest}}}
	for _, img := range images(t, render(t, pinned)) {
		if !strings.HasSuffix(img, "@"+testDigest) {
			t.Errorf("image %q is not pinned to the digest", img)
		}
		if ref, _, _ := strings.Cut(img, "@"); !strings.Contains(ref[strings.LastIndex(ref, "/"):], ":") {
			t.Errorf("pinned image %q lost its tag", img)
		}
	}
	if _, err := tryRender(chartDir(t), m{"image": m{"digest": "latest"}}); err == nil || !strings.Contains(err.Error(), "/image/digest") {
		t.Errorf("a malformed digest rendered (err %v)", err)
	}
}
