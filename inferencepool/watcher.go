package inferencepool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// Sink receives a pool's membership; the router's pools and index
// implement it.
type Sink interface {
	// SetMembers replaces the pool's endpoints with endpoints (sorted).
	SetMembers(endpoints []string)
	// Left is told of each endpoint that stopped being a member, after
	// SetMembers has removed it: its cached state is to be forgotten.
	Left(endpoint string)
}

// Target names the InferencePool a watcher follows.
type Target struct {
	Namespace, Name string
}

func (t Target) String() string { return t.Namespace + "/" + t.Name }

// Watcher follows one InferencePool and the Pods of its namespace and keeps
// a Sink's membership equal to the pool's ready members. Build it with New.
type Watcher struct {
	target  Target
	sink    Sink
	log     *slog.Logger
	metrics *Metrics

	pools   cache.SharedIndexInformer
	poolGet cache.GenericNamespaceLister
	pods    cache.SharedIndexInformer
	podList corelisters.PodLister
	changed chan struct{} // one pending recompute at most

	synced     chan struct{}
	syncedOnce sync.Once
	members    []string          // as last handed to the sink; owned by Run
	roles      map[string]string // members' role labels, likewise (roles.go)
	nextRoles  map[string]string // what current found; owned by Run
	lastErr    string            // the last spec problem logged; owned by Run
	errs       watchErrors
	watching   *watching
}

// New returns a watcher of target through the dynamic client (the
// InferencePool) and the core client (Pods), both confined to the target's
// namespace. Only the core group's client is taken, not a whole clientset:
// the router binary then links one API group, not all of them. m may be
// nil; log may be nil.
func New(dyn dynamic.Interface, core corev1client.PodsGetter, target Target, sink Sink, m *Metrics, log *slog.Logger) (*Watcher, error) {
	if target.Namespace == "" || target.Name == "" {
		return nil, fmt.Errorf("creating inferencepool watcher: namespace and name are required, got %q", target)
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if m == nil {
		m, _ = NewMetrics(nil)
	}
	w := &Watcher{
		target: target, sink: sink, log: log, metrics: m,
		changed:  make(chan struct{}, 1),
		synced:   make(chan struct{}),
		watching: newWatching(),
	}
	pools := dyn.Resource(GVR).Namespace(target.Namespace)
	byName := fields.OneTermEqualSelector("metadata.name", target.Name).String()
	w.pools = w.informer(resourcePools, &unstructured.Unstructured{}, dyn,
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = byName
			return pools.List(ctx, o)
		},
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = byName
			return pools.Watch(ctx, o)
		})
	w.poolGet = cache.NewGenericLister(w.pools.GetIndexer(), GVR.GroupResource()).ByNamespace(target.Namespace)
	pods := core.Pods(target.Namespace)
	w.pods = w.informer(resourcePods, &corev1.Pod{}, core,
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return pods.List(ctx, o) },
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return pods.Watch(ctx, o) })
	w.podList = corelisters.NewPodLister(w.pods.GetIndexer())
	notify := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { w.poke() },
		UpdateFunc: func(any, any) { w.poke() },
		DeleteFunc: func(any) { w.poke() },
	}
	for r, inf := range map[string]cache.SharedIndexInformer{resourcePools: w.pools, resourcePods: w.pods} {
		if err := inf.SetWatchErrorHandlerWithContext(w.handler(r)); err != nil {
			return nil, fmt.Errorf("watching %s: %w", r, err)
		}
		if _, err := inf.AddEventHandler(notify); err != nil {
			return nil, fmt.Errorf("watching %s: %w", r, err)
		}
	}
	return w, nil
}

// informer is an informer of one resource whose watches are tracked: the
// watcher syncs only once each resource's watch is open. client is asked,
// through the semantics wrapper, whether it can stream the initial list (a
// watch-list); fake clients say they cannot.
func (w *Watcher) informer(resource string, obj runtime.Object, client any,
	list func(context.Context, metav1.ListOptions) (runtime.Object, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error)) cache.SharedIndexInformer {
	lw := &cache.ListWatch{
		ListWithContextFunc: list,
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			wi, err := watchFn(ctx, o)
			w.watching.set(resource, err == nil)
			return wi, err
		},
	}
	return cache.NewSharedIndexInformerWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, client), obj,
		cache.SharedIndexInformerOptions{Indexers: cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
			ObjectDescription: resource})
}

// poke asks Run to recompute; it never blocks (a pending recompute will
// see this change too).
func (w *Watcher) poke() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// Synced is closed once both caches have synced, a watch of each resource
// is open (a cache filled by a list alone would never change) and the first
// membership has reached the sink.
func (w *Watcher) Synced() <-chan struct{} { return w.synced }

// Run starts the informers and keeps the sink's membership current until
// ctx ends; it returns after the informers have stopped. It returns an
// error when the watcher cannot sync before ctx ends, with the last list or
// watch failure of each informer (a forbidden one names the missing RBAC
// permission).
func (w *Watcher) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { w.pools.Run(ctx.Done()) })
	wg.Go(func() { w.pods.Run(ctx.Done()) })
	defer func() { cancel(); wg.Wait() }()
	if !cache.WaitForCacheSync(ctx.Done(), w.pools.HasSynced, w.pods.HasSynced) || !w.watching.wait(ctx) {
		err := fmt.Errorf("syncing inferencepool %s and its pods: %w", w.target, errors.Join(ctx.Err(), context.Canceled))
		if last := w.lastErrors(); last != nil {
			err = fmt.Errorf("%w; last list/watch error: %w", err, last)
		}
		return err
	}
	w.update()
	w.syncedOnce.Do(func() { close(w.synced) })
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-w.changed:
			w.update()
		}
	}
}

// update recomputes the membership and hands changes to the sink.
func (w *Watcher) update() {
	next, roles := w.current(), w.nextRoles
	if slices.Equal(next, w.members) && w.members != nil && maps.Equal(roles, w.roles) {
		return
	}
	prev := w.members
	w.members, w.roles = next, roles
	if rs, ok := w.sink.(RoleSink); ok {
		rs.SetRoleLabels(roles)
	}
	w.sink.SetMembers(next)
	for _, ep := range prev {
		if _, found := slices.BinarySearch(next, ep); !found {
			w.sink.Left(ep)
		}
	}
	w.metrics.members.Add(float64(len(next) - len(prev)))
	w.metrics.changes.Inc()
	w.log.Info("inferencepool membership", "pool", w.target.String(), "members", len(next))
}

// current is the pool's membership now: none when the pool is missing or
// its spec unusable (each problem logged once).
func (w *Watcher) current() []string {
	w.nextRoles = nil
	obj, err := w.poolGet.Get(w.target.Name)
	if err != nil {
		w.problem("inferencepool not found: no members", err)
		return []string{}
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		w.problem("inferencepool of an unexpected type: no members", fmt.Errorf("%T", obj))
		return []string{}
	}
	s, err := parseSpec(u)
	if err != nil {
		w.problem("inferencepool spec unusable: no members", err)
		return []string{}
	}
	w.lastErr = ""
	pods, err := w.podList.Pods(w.target.Namespace).List(labels.Everything())
	if err != nil {
		return []string{}
	}
	if m := s.members(pods); m != nil {
		w.nextRoles = s.roleLabels(pods)
		return m
	}
	return []string{}
}

// problem logs why the pool has no members, once per distinct error.
func (w *Watcher) problem(msg string, err error) {
	if err.Error() == w.lastErr {
		return
	}
	w.lastErr = err.Error()
	w.log.Warn(msg, "pool", w.target.String(), "err", err)
}
