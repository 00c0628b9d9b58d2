package inferencepool

import (
	"context"
	"maps"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/internal/testwait"
)

// roleSink is a recordingSink that also records role labels.
type roleSink struct {
	recordingSink
	rmu    sync.Mutex
	labels map[string]string
}

func (s *roleSink) SetRoleLabels(l map[string]string) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	s.labels = maps.Clone(l)
}

func (s *roleSink) roles() map[string]string {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	return maps.Clone(s.labels)
}

func withRole(role string) map[string]string {
	return map[string]string{"app": "vllm", api.RoleLabel: role}
}

// TestRoleLabelsFollowPods: a RoleSink gets the llm-d.ai/role value of each
// member that has one (members without it are absent, non-members too), and
// a label change alone reaches it.
func TestRoleLabelsFollowPods(t *testing.T) {
	kube := kubefake.NewClientset(
		pod("p", "192.0.2.1", withRole("prefill"), podState{ready: true}),
		pod("d", "192.0.2.2", withRole("decode"), podState{ready: true}),
		pod("plain", "192.0.2.3", vllm, podState{ready: true}),
		pod("unready", "192.0.2.4", withRole("prefill"), podState{}),
	)
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{GVR: "InferencePoolList"}, poolObject("pool", map[string]any{"app": "vllm"}, 8000))
	sink := &roleSink{}
	w, err := New(dyn, FakeCore{kube.CoreV1()}, Target{Namespace: ns, Name: "pool"}, sink, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() { cancel(); <-done }()
	select {
	case <-w.Synced():
	case <-time.After(30 * time.Second):
		t.Fatal("watcher never synced")
	}
	want := map[string]string{"192.0.2.1:8000": "prefill", "192.0.2.2:8000": "decode"}
	if got := sink.roles(); !maps.Equal(got, want) {
		t.Fatalf("role labels = %v, want %v", got, want)
	}
	relabelled := pod("d", "192.0.2.2", withRole("prefill-decode"), podState{ready: true})
	if _, err := kube.CoreV1().Pods(ns).Update(context.Background(), relabelled, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	want["192.0.2.2:8000"] = "prefill-decode"
	testwait.Until(t, 30*time.Second, func() string {
		if got := sink.roles(); !maps.Equal(got, want) {
			return "role labels do not follow the relabelled pod"
		}
		return ""
	})
}
