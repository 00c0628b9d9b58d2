package inferencepool

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/warmroute/warmroute/internal/testlog"
)

// TestForbiddenIsReported: a pod list or watch the API server forbids keeps
// the watcher unsynced (a list alone fills the cache but never changes it);
// the failure is counted by resource and reason, logged once although the
// reflector retries, and named in Run's error.
func TestForbiddenIsReported(t *testing.T) {
	for _, verb := range []string{"list", "watch"} {
		t.Run(verb, func(t *testing.T) { testForbidden(t, verb) })
	}
}

func testForbidden(t *testing.T, verb string) {
	kube := kubefake.NewClientset()
	msg := `User "x" cannot ` + verb + ` resource "pods"`
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New(msg))
	if verb == "list" {
		kube.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, forbidden })
	} else {
		kube.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) { return true, nil, forbidden })
	}
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{GVR: "InferencePoolList"}, poolObject("pool", map[string]any{"app": "vllm"}, 8000))
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	var logs testlog.Buffer
	w, err := New(dyn, FakeCore{kube.CoreV1()}, Target{Namespace: ns, Name: "pool"}, &recordingSink{}, m,
		slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	err = w.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), msg) {
		t.Fatalf("Run = %v, want the forbidden list named", err)
	}
	select {
	case <-w.Synced():
		t.Fatalf("synced without being allowed to %s pods", verb)
	default:
	}
	if n := testutil.ToFloat64(m.watchErrors.WithLabelValues(resourcePods, "forbidden")); n < 2 {
		t.Errorf("forbidden pod list failures counted %v, want the retries too (>= 2)", n)
	}
	if n := testutil.ToFloat64(m.watchErrors.WithLabelValues(resourcePools, "forbidden")); n != 0 {
		t.Errorf("pool list failures counted %v, want 0", n)
	}
	if got := strings.Count(logs.String(), "cannot list or watch"); got != 1 {
		t.Errorf("logged the same failure %d times, want once:\n%s", got, logs.String())
	}
}

func TestReason(t *testing.T) {
	gr := schema.GroupResource{Resource: "pods"}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{apierrors.NewForbidden(gr, "", errors.New("no")), "forbidden"},
		{apierrors.NewUnauthorized("no"), "unauthorized"},
		{apierrors.NewNotFound(gr, ""), "not_found"},
		{errors.New("connection refused"), "other"},
	} {
		if got := reason(tc.err); got != tc.want {
			t.Errorf("reason(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
	if !benign(apierrors.NewResourceExpired("too old")) || benign(errors.New("x")) {
		t.Error("benign misclassifies")
	}
}
