package envtest

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/inferencepool"
	"github.com/warmroute/warmroute/internal/testlog"
	"github.com/warmroute/warmroute/internal/testwait"
	"github.com/warmroute/warmroute/scorer"
)

// The router's view of one pool: its scorer pools and prefix index, fed by
// the watcher as the router feeds them.
const (
	model     = "m"
	blockSize = 4
)

// routerState is a router pool and index behind an inferencepool.Sink, as
// `warmroute serve` wires them: members replace the pool's endpoints and a
// departed endpoint's index entries are dropped.
type routerState struct {
	pools *scorer.Pools
	ix    *index.Index
}

func newRouterState(t *testing.T) routerState {
	t.Helper()
	ix, err := index.New(index.Options{BlockSize: blockSize})
	if err != nil {
		t.Fatal(err)
	}
	return routerState{pools: scorer.NewPools([]scorer.PoolConfig{{Name: model}}, ""), ix: ix}
}

func (s routerState) SetMembers(eps []string) { s.pools.SetEndpoints(model, eps) }

func (s routerState) Left(ep string) {
	if _, err := s.ix.ClearEndpoint(ep); err != nil {
		panic(err) // the endpoint is a valid host:port; a failure is a bug
	}
}

// candidates are the endpoints the router may route the model's requests to.
func (s routerState) candidates() []string {
	_, eps, err := s.pools.Lookup(model)
	if err != nil {
		return nil
	}
	return slices.Sorted(slices.Values(eps))
}

// prompt is the chain the tests cache: three full blocks.
var prompt = []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}

// cache stores prompt's chain as confirmed on endpoint, as a BlockStored
// event from its engine would.
func (s routerState) cache(t *testing.T, endpoint string) {
	t.Helper()
	keys := s.keys(t)
	hashes := make([]uint64, len(keys))
	for i, k := range keys {
		hashes[i] = uint64(k) // engine-side hashes; any distinct values do
	}
	if _, err := s.ix.Store(index.Stored{Endpoint: endpoint, Hashes: hashes, Tokens: prompt,
		BlockSize: blockSize, Identity: index.Identity{Model: model}}); err != nil {
		t.Fatal(err)
	}
	if got := s.held(t, endpoint); got != len(keys) {
		t.Fatalf("%s holds %d blocks of the chain just stored, want %d", endpoint, got, len(keys))
	}
}

func (s routerState) keys(t *testing.T) []index.Key {
	t.Helper()
	keys, err := index.AppendKeys(nil, index.Identity{Model: model}, blockSize, prompt)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// held is how many leading blocks of prompt's chain a lookup finds on
// endpoint.
func (s routerState) held(t *testing.T, endpoint string) int {
	t.Helper()
	return s.ix.Lookup(s.keys(t), []string{endpoint}, nil)[0].Blocks()
}

// running is a watcher under test.
type running struct {
	w    *inferencepool.Watcher
	reg  *prometheus.Registry
	logs *testlog.Buffer
	done chan error
	stop context.CancelFunc
}

// watch runs an inferencepool watcher of ns/pool with cfg's identity into sink.
func watch(t *testing.T, cfg clients, ns, pool string, sink inferencepool.Sink) *running {
	t.Helper()
	r := &running{reg: prometheus.NewRegistry(), logs: &testlog.Buffer{}, done: make(chan error, 1)}
	m, err := inferencepool.NewMetrics(r.reg)
	if err != nil {
		t.Fatal(err)
	}
	core, err := corev1client.NewForConfig(cfg.cfg)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(r.logs, nil))
	r.w, err = inferencepool.New(cfg.dyn, core, inferencepool.Target{Namespace: ns, Name: pool}, sink, m, log)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	go func() { r.done <- r.w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	return r
}

// synced waits for the watcher's first membership.
func (r *running) synced(t *testing.T) {
	t.Helper()
	select {
	case <-r.w.Synced():
	case err := <-r.done:
		t.Fatalf("watcher stopped before syncing: %v\n%s", err, r.logs)
	case <-time.After(time.Minute):
		t.Fatalf("watcher did not sync in a minute:\n%s", r.logs)
	}
}

// podSpec is a pod as the tests want it.
type podSpec struct {
	name, ip string
	labels   map[string]string
	ready    bool
	phase    corev1.PodPhase // default Running
}

// addPod creates a pod bound to a (nonexistent) node, so that deleting it
// is graceful, as for a pod a kubelet runs, and sets its status through the
// status subresource, as a kubelet would.
func addPod(t *testing.T, adm clients, ns string, p podSpec) {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: ns, Labels: p.labels},
		Spec: corev1.PodSpec{NodeName: "node-1",
			Containers: []corev1.Container{{Name: "engine", Image: "registry.example/engine:1"}}},
	}
	created, err := adm.kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s: %v", p.name, err)
	}
	setStatus(t, adm, created, p)
}

// setStatus gives pod the phase, IP and readiness of p.
func setStatus(t *testing.T, adm clients, pod *corev1.Pod, p podSpec) {
	t.Helper()
	st := corev1.ConditionFalse
	if p.ready {
		st = corev1.ConditionTrue
	}
	pod.Status.Phase = p.phase
	if pod.Status.Phase == "" {
		pod.Status.Phase = corev1.PodRunning
	}
	pod.Status.PodIP, pod.Status.PodIPs = p.ip, nil
	if p.ip != "" {
		pod.Status.PodIPs = []corev1.PodIP{{IP: p.ip}}
	}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st, LastTransitionTime: metav1.Now()}}
	if _, err := adm.kube.CoreV1().Pods(pod.Namespace).UpdateStatus(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("setting the status of pod %s: %v", pod.Name, err)
	}
}

// setReady flips a pod's Ready condition.
func setReady(t *testing.T, adm clients, ns string, p podSpec) {
	t.Helper()
	pod, err := adm.kube.CoreV1().Pods(ns).Get(context.Background(), p.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	setStatus(t, adm, pod, p)
}

// patchPool merge-patches the InferencePool's spec.
func patchPool(t *testing.T, adm clients, ns, name, patch string) {
	t.Helper()
	_, err := adm.dyn.Resource(inferencepool.GVR).Namespace(ns).Patch(context.Background(), name,
		types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldValidation: "Strict"})
	if err != nil {
		t.Fatalf("patching the InferencePool with %s: %v", patch, err)
	}
}

// waitCandidates waits until the router's candidates are want.
func waitCandidates(t *testing.T, s routerState, want ...string) {
	t.Helper()
	slices.Sort(want)
	testwait.Until(t, time.Minute, func() string {
		if got := s.candidates(); !slices.Equal(got, want) {
			return "candidates [" + strings.Join(got, " ") + "], want [" + strings.Join(want, " ") + "]"
		}
		return ""
	})
}

// TestMembershipFromTheAPIServer follows the chart's InferencePool as the
// chart's service account, bound only to the chart's Role: the candidates
// are the Running, Ready, not terminating selected pods with an IP, on the
// target port; a pod that turns unready, terminates or is deleted leaves at
// once and its chain is gone from the index; selector and target port
// changes re-evaluate every pod.
func TestMembershipFromTheAPIServer(t *testing.T) {
	adm := newClients(t, admin(t))
	ns := namespace(t, adm.kube)
	chart := installChart(t, adm, ns)
	pool := chart.one(t, "InferencePool").GetName()
	sa := newClients(t, serviceAccount(t, adm, ns, chart.one(t, "ServiceAccount").GetName()))

	vllm := map[string]string{"app": "vllm"}
	gold := map[string]string{"app": "vllm", "tier": "gold"}
	a := podSpec{name: "a", ip: "192.0.2.1", labels: vllm, ready: true}
	b := podSpec{name: "b", ip: "192.0.2.2", labels: vllm, ready: true}
	for _, p := range []podSpec{a, b,
		{name: "other-app", ip: "192.0.2.3", labels: map[string]string{"app": "other"}, ready: true},
		{name: "pending", ip: "192.0.2.4", labels: vllm, ready: true, phase: corev1.PodPending},
		{name: "no-ip", labels: vllm, ready: true},
		{name: "unready", ip: "192.0.2.5", labels: vllm},
	} {
		addPod(t, adm, ns, p)
	}
	rs := newRouterState(t)
	w := watch(t, sa, ns, pool, rs)
	w.synced(t)
	waitCandidates(t, rs, "192.0.2.1:8000", "192.0.2.2:8000")
	rs.cache(t, "192.0.2.1:8000")
	rs.cache(t, "192.0.2.2:8000")

	t.Run("unready leaves and its chain is dropped", func(t *testing.T) {
		a.ready = false
		setReady(t, adm, ns, a)
		waitCandidates(t, rs, "192.0.2.2:8000")
		if n := rs.held(t, "192.0.2.1:8000"); n != 0 {
			t.Errorf("the unready pod still holds %d blocks of the chain", n)
		}
		if n := rs.held(t, "192.0.2.2:8000"); n != 3 {
			t.Errorf("the ready pod holds %d blocks, want its 3", n)
		}
	})
	t.Run("ready again rejoins without its old chain", func(t *testing.T) {
		a.ready = true
		setReady(t, adm, ns, a)
		waitCandidates(t, rs, "192.0.2.1:8000", "192.0.2.2:8000")
		if n := rs.held(t, "192.0.2.1:8000"); n != 0 {
			t.Errorf("the rejoined pod holds %d blocks, want none", n)
		}
	})
	t.Run("a new ready pod joins", func(t *testing.T) {
		addPod(t, adm, ns, podSpec{name: "c", ip: "192.0.2.6", labels: gold, ready: true})
		waitCandidates(t, rs, "192.0.2.1:8000", "192.0.2.2:8000", "192.0.2.6:8000")
	})
	t.Run("terminating leaves", func(t *testing.T) {
		// Graceful deletion of a pod on a node: the API server only sets
		// deletionTimestamp; no kubelet finishes it, so it stays listed.
		if err := adm.kube.CoreV1().Pods(ns).Delete(context.Background(), "b", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		got, err := adm.kube.CoreV1().Pods(ns).Get(context.Background(), "b", metav1.GetOptions{})
		if err != nil || got.DeletionTimestamp == nil {
			t.Fatalf("pod b after a graceful delete: %v, %v; want it terminating", got, err)
		}
		waitCandidates(t, rs, "192.0.2.1:8000", "192.0.2.6:8000")
		if n := rs.held(t, "192.0.2.2:8000"); n != 0 {
			t.Errorf("the terminating pod still holds %d blocks", n)
		}
	})
	t.Run("deleted leaves", func(t *testing.T) {
		rs.cache(t, "192.0.2.1:8000")
		zero := int64(0)
		if err := adm.kube.CoreV1().Pods(ns).Delete(context.Background(), "a", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Fatal(err)
		}
		waitCandidates(t, rs, "192.0.2.6:8000")
		if n := rs.held(t, "192.0.2.1:8000"); n != 0 {
			t.Errorf("the deleted pod still holds %d blocks", n)
		}
	})
	t.Run("selector change re-evaluates every pod", func(t *testing.T) {
		addPod(t, adm, ns, podSpec{name: "d", ip: "192.0.2.7", labels: vllm, ready: true})
		waitCandidates(t, rs, "192.0.2.6:8000", "192.0.2.7:8000")
		rs.cache(t, "192.0.2.7:8000")
		patchPool(t, adm, ns, pool, `{"spec":{"selector":{"matchLabels":{"app":"vllm","tier":"gold"}}}}`)
		waitCandidates(t, rs, "192.0.2.6:8000")
		if n := rs.held(t, "192.0.2.7:8000"); n != 0 {
			t.Errorf("the deselected pod still holds %d blocks", n)
		}
		patchPool(t, adm, ns, pool, `{"spec":{"selector":{"matchLabels":{"tier":null}}}}`)
		waitCandidates(t, rs, "192.0.2.6:8000", "192.0.2.7:8000")
	})
	t.Run("target port change moves every member", func(t *testing.T) {
		rs.cache(t, "192.0.2.6:8000")
		patchPool(t, adm, ns, pool, `{"spec":{"targetPorts":[{"number":8001}]}}`)
		waitCandidates(t, rs, "192.0.2.6:8001", "192.0.2.7:8001")
		if n := rs.held(t, "192.0.2.6:8000"); n != 0 {
			t.Errorf("the old port still holds %d blocks", n)
		}
	})
	if t.Failed() {
		t.Logf("watcher log:\n%s", w.logs)
	}
	if errs := counted(t, w.reg, "warmroute_inferencepool_watch_errors_total"); errs != 0 {
		t.Errorf("%v list/watch failures with the chart's Role:\n%s", errs, w.logs)
	}
}
