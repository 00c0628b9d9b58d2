package inferencepool

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/warmroute/warmroute/internal/testwait"
)

const ns = "llm"

// recordingSink is an in-memory Sink.
type recordingSink struct {
	mu      sync.Mutex
	members []string
	sets    int
	left    []string
}

func (s *recordingSink) SetMembers(eps []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.members, s.sets = slices.Clone(eps), s.sets+1
}

func (s *recordingSink) Left(ep string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.left = append(s.left, ep)
}

func (s *recordingSink) state() (members, left []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.members), slices.Clone(s.left)
}

func poolObject(name string, match map[string]any, ports ...int64) *unstructured.Unstructured {
	tp := make([]any, 0, len(ports))
	for _, p := range ports {
		tp = append(tp, map[string]any{"number": p})
	}
	spec := map[string]any{"targetPorts": tp, "endpointPickerRef": map[string]any{"name": "warmroute"}}
	if match != nil {
		spec["selector"] = map[string]any{"matchLabels": match}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "inference.networking.k8s.io/v1", "kind": "InferencePool",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}}
}

type podState struct {
	ready, terminating bool
	phase              corev1.PodPhase
}

func pod(name, ip string, lbls map[string]string, st podState) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: lbls},
		Status:     corev1.PodStatus{Phase: st.phase, PodIP: ip},
	}
	if p.Status.Phase == "" {
		p.Status.Phase = corev1.PodRunning
	}
	cond := corev1.ConditionFalse
	if st.ready {
		cond = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: cond}}
	if st.terminating {
		now := metav1.Now()
		p.DeletionTimestamp = &now
		p.Finalizers = []string{"test/keep"} // a deleting pod stays listed
	}
	return p
}

var vllm = map[string]string{"app": "vllm"}

// fixture is a watcher over fake clients.
type fixture struct {
	t    *testing.T
	dyn  *dynfake.FakeDynamicClient
	kube *kubefake.Clientset
	sink *recordingSink
	w    *Watcher
}

func newFixture(t *testing.T, objs []runtime.Object, pools ...*unstructured.Unstructured) *fixture {
	t.Helper()
	scheme := runtime.NewScheme()
	dynObjs := make([]runtime.Object, 0, len(pools))
	for _, p := range pools {
		dynObjs = append(dynObjs, p)
	}
	f := &fixture{t: t, sink: &recordingSink{},
		dyn:  dynfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{GVR: "InferencePoolList"}, dynObjs...),
		kube: kubefake.NewClientset(objs...)}
	w, err := New(f.dyn, FakeCore{f.kube.CoreV1()}, Target{Namespace: ns, Name: "pool"}, f.sink, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.w = w
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	})
	select {
	case <-w.Synced():
	case <-time.After(30 * time.Second):
		t.Fatal("watcher never synced")
	}
	return f
}

// wait polls until the sink's membership is want and its departures include
// every endpoint in left.
func (f *fixture) wait(want []string, left ...string) {
	f.t.Helper()
	testwait.Until(f.t, 30*time.Second, func() string {
		got, gone := f.sink.state()
		if !slices.Equal(got, want) {
			return "members " + join(got) + ", want " + join(want)
		}
		for _, ep := range left {
			if !slices.Contains(gone, ep) {
				return "no Left(" + ep + "); left " + join(gone)
			}
		}
		return ""
	})
}

func join(s []string) string { return "[" + strings.Join(s, " ") + "]" }

func (f *fixture) updatePod(p *corev1.Pod) {
	f.t.Helper()
	if _, err := f.kube.CoreV1().Pods(ns).UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

// TestMembershipFollowsPods: the members are the ready, running, not
// terminating pods the selector picks, on the target port; a pod that turns
// unready or is deleted leaves at once (and is reported as Left), a new
// ready pod joins.
func TestMembershipFollowsPods(t *testing.T) {
	other := map[string]string{"app": "other"}
	f := newFixture(t, []runtime.Object{
		pod("a", "192.0.2.1", vllm, podState{ready: true}),
		pod("b", "192.0.2.2", vllm, podState{ready: true}),
		pod("unready", "192.0.2.3", vllm, podState{}),
		pod("elsewhere", "192.0.2.4", other, podState{ready: true}),
		pod("going", "192.0.2.5", vllm, podState{ready: true, terminating: true}),
		pod("pending", "192.0.2.6", vllm, podState{ready: true, phase: corev1.PodPending}),
		pod("noip", "", vllm, podState{ready: true}),
	}, poolObject("pool", map[string]any{"app": "vllm"}, 8000))
	f.wait([]string{"192.0.2.1:8000", "192.0.2.2:8000"})

	f.updatePod(pod("b", "192.0.2.2", vllm, podState{}))
	f.wait([]string{"192.0.2.1:8000"}, "192.0.2.2:8000")

	if err := f.kube.CoreV1().Pods(ns).Delete(context.Background(), "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.wait([]string{}, "192.0.2.1:8000")

	if _, err := f.kube.CoreV1().Pods(ns).Create(context.Background(), pod("c", "192.0.2.7", vllm, podState{ready: true}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.wait([]string{"192.0.2.7:8000"})
	f.updatePod(pod("unready", "192.0.2.3", vllm, podState{ready: true}))
	f.wait([]string{"192.0.2.3:8000", "192.0.2.7:8000"})
}

// TestMembershipFollowsThePool: a selector or port change re-selects the
// members; a deleted pool, or one whose spec cannot select, has none.
func TestMembershipFollowsThePool(t *testing.T) {
	f := newFixture(t, []runtime.Object{
		pod("a", "192.0.2.1", vllm, podState{ready: true}),
		pod("b", "192.0.2.2", map[string]string{"app": "vllm", "tier": "big"}, podState{ready: true}),
	}, poolObject("pool", map[string]any{"app": "vllm"}, 8000), poolObject("another", map[string]any{"tier": "big"}, 9000))
	f.wait([]string{"192.0.2.1:8000", "192.0.2.2:8000"})

	pools := f.dyn.Resource(GVR).Namespace(ns)
	update := func(u *unstructured.Unstructured) {
		t.Helper()
		cur, err := pools.Get(context.Background(), "pool", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		u.SetResourceVersion(cur.GetResourceVersion())
		if _, err := pools.Update(context.Background(), u, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	update(poolObject("pool", map[string]any{"app": "vllm", "tier": "big"}, 8001))
	f.wait([]string{"192.0.2.2:8001"}, "192.0.2.1:8000", "192.0.2.2:8000")

	update(poolObject("pool", nil, 8001)) // no selector: nobody, not everybody
	f.wait([]string{}, "192.0.2.2:8001")

	update(poolObject("pool", map[string]any{"app": "vllm"}, 8000))
	f.wait([]string{"192.0.2.1:8000", "192.0.2.2:8000"})
	if err := pools.Delete(context.Background(), "pool", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.wait([]string{})
}

// TestMissingPoolSyncsEmpty: a pool that does not exist yet syncs with no
// members (the router then answers 503), and its creation brings them.
func TestMissingPoolSyncsEmpty(t *testing.T) {
	f := newFixture(t, []runtime.Object{pod("a", "192.0.2.1", vllm, podState{ready: true})})
	if got, _ := f.sink.state(); got == nil || len(got) != 0 {
		t.Fatalf("members %v after sync, want an empty set", got)
	}
	if _, err := f.dyn.Resource(GVR).Namespace(ns).Create(context.Background(),
		poolObject("pool", map[string]any{"app": "vllm"}, 8000), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.wait([]string{"192.0.2.1:8000"})
}

func TestNewRejectsAnIncompleteTarget(t *testing.T) {
	for _, tg := range []Target{{}, {Namespace: ns}, {Name: "pool"}} {
		if _, err := New(nil, nil, tg, &recordingSink{}, nil, nil); err == nil {
			t.Errorf("New(%v) accepted an incomplete target", tg)
		}
	}
}

// FakeCore is a fake core client that, like the fake clientset, says it
// cannot stream an initial list.
type FakeCore struct{ corev1client.PodsGetter }

func (FakeCore) IsWatchListSemanticsUnSupported() bool { return true }
