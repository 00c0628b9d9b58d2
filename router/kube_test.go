package router

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/inferencepool"
	"github.com/warmroute/warmroute/internal/testwait"
	"github.com/warmroute/warmroute/scorer"
)

func readyPod(name, ip string, ready bool) *corev1.Pod {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "llm", Labels: map[string]string{"app": "vllm"}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}},
	}
}

// fakeInferencePool makes the router's Kubernetes clients fakes holding the
// InferencePool llm/vllm (pods labelled app=vllm, port 8000) and pods, until
// t ends; it returns the core fake, for pod changes.
func fakeInferencePool(t *testing.T, pods ...runtime.Object) *kubefake.Clientset {
	t.Helper()
	pool := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "inference.networking.k8s.io/v1", "kind": "InferencePool",
		"metadata": map[string]any{"name": "vllm", "namespace": "llm"},
		"spec": map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "vllm"}},
			"targetPorts": []any{map[string]any{"number": int64(8000)}}},
	}}
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{inferencepool.GVR: "InferencePoolList"}, pool)
	kube := kubefake.NewClientset(pods...)
	saved := kubeClients
	kubeClients = func() (dynamic.Interface, corev1client.PodsGetter, error) { return dyn, fakeCore{kube.CoreV1()}, nil }
	t.Cleanup(func() { kubeClients = saved })
	return kube
}

// TestRouterPoolFromInferencePool: a pool naming an InferencePool routes to
// its ready pods; a pod that turns unready stops being chosen and its
// cached blocks are forgotten.
func TestRouterPoolFromInferencePool(t *testing.T) {
	kube := fakeInferencePool(t, readyPod("a", "192.0.2.1", true), readyPod("b", "192.0.2.2", true))

	var cfg Config
	cfg.Events.Disabled = true
	cfg.Pools = []scorer.PoolConfig{{Name: "m", InferencePool: "llm/vllm"}}
	a := startRouterAt(t, cfg) // ready only once the pool has synced
	conn, err := grpc.NewClient(a.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	seen := map[string]bool{}
	for range 40 {
		seen[routeHeaderOnly(t, conn)] = true
	}
	if !seen["192.0.2.1:8000"] || !seen["192.0.2.2:8000"] || len(seen) != 2 {
		t.Fatalf("routed to %v, want both ready pods", seen)
	}
	if _, err := kube.CoreV1().Pods("llm").UpdateStatus(context.Background(), readyPod("a", "192.0.2.1", false), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 30*time.Second, testwait.That("the unready pod is never chosen", func() bool {
		for range 20 {
			if routeHeaderOnly(t, conn) != "192.0.2.2:8000" {
				return false
			}
		}
		return true
	}))
}

// TestPoolSinkForgetsWhatLeft: the sink replaces the pool's endpoints and
// drops a departed endpoint's index entries.
func TestPoolSinkForgetsWhatLeft(t *testing.T) {
	ix, err := index.New(index.Options{BlockSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	pools := scorer.NewPools([]scorer.PoolConfig{{Name: "m"}}, "")
	s := poolSink{pools: pools, ix: ix, name: "m"}
	s.SetMembers([]string{"192.0.2.1:8000", "192.0.2.2:8000"})
	if _, err := ix.Store(index.Stored{Endpoint: "192.0.2.1:8000", Hashes: []uint64{1}, Tokens: []uint32{1, 2, 3, 4}, BlockSize: 4, Identity: index.Identity{Model: "m"}}); err != nil {
		t.Fatal(err)
	}
	if n := ix.EndpointEntries("192.0.2.1:8000").Confirmed; n != 1 {
		t.Fatalf("stored %d entries, want 1", n)
	}
	s.SetMembers([]string{"192.0.2.2:8000"})
	s.Left("192.0.2.1:8000")
	if _, eps, _ := pools.Lookup("m"); len(eps) != 1 || eps[0] != "192.0.2.2:8000" {
		t.Errorf("pool endpoints %v, want [192.0.2.2:8000]", eps)
	}
	if n := ix.EndpointEntries("192.0.2.1:8000").Confirmed; n != 0 {
		t.Errorf("the departed endpoint keeps %d entries", n)
	}
}

func TestOwnNamespace(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "llm")
	if ns, err := ownNamespace(); err != nil || ns != "llm" {
		t.Errorf("ownNamespace = %q, %v; want llm", ns, err)
	}
}

// fakeCore is the fake core client, saying (as the fake clientset does) that
// it cannot stream an initial list.
type fakeCore struct{ corev1client.PodsGetter }

func (fakeCore) IsWatchListSemanticsUnSupported() bool { return true }

// TestPoolMemberAdmitsCurrentMembers: the relays of an InferencePool pool's
// members are admitted while they are members, under the pool's name and
// aliases only; static pools keep their configured list.
func TestPoolMemberAdmitsCurrentMembers(t *testing.T) {
	var cfg Config
	cfg.Pools = []scorer.PoolConfig{{Name: "kube", Models: []string{"alias"}, InferencePool: "llm/vllm"},
		{Name: "static", Endpoints: []string{"10.0.0.1:8000"}}}
	km := kubeModels(cfg)
	if !km["kube"] || !km["alias"] || km["static"] {
		t.Fatalf("kube models %v, want kube and alias only", km)
	}
	r := &Router{pipe: &pipeline{pools: scorer.NewPools(cfg.Pools, "")}}
	r.pipe.pools.SetEndpoints("kube", []string{"192.0.2.1:8000"})
	member := r.poolMember(km)
	for _, tt := range []struct {
		model, ep string
		want      bool
	}{
		{"kube", "192.0.2.1:8000", true},
		{"alias", "192.0.2.1:8000", true},
		{"kube", "192.0.2.2:8000", false},
		{"static", "10.0.0.1:8000", false}, // admitted by the configured list, not here
		{"other", "192.0.2.1:8000", false},
	} {
		if got := member(tt.model, tt.ep); got != tt.want {
			t.Errorf("member(%s, %s) = %v, want %v", tt.model, tt.ep, got, tt.want)
		}
	}
	r.pipe.pools.SetEndpoints("kube", nil) // the pod left
	if member("kube", "192.0.2.1:8000") {
		t.Error("a departed pod is still admitted")
	}
	if kubeModels(Config{}) != nil {
		t.Error("kube models without an InferencePool pool")
	}
}
