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
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
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

	pools   informers.GenericInformer
	pods    cache.SharedIndexInformer
	podList corelisters.PodLister
	start   func(stop <-chan struct{})
	changed chan struct{} // one pending recompute at most

	synced     chan struct{}
	syncedOnce sync.Once
	members    []string          // as last handed to the sink; owned by Run
	roles      map[string]string // members' role labels, likewise (roles.go)
	nextRoles  map[string]string // what current found; owned by Run
	lastErr    string            // the last spec problem logged; owned by Run
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
	byName := func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", target.Name).String()
	}
	dynFactory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, target.Namespace, byName)
	pods := core.Pods(target.Namespace)
	// The semantics wrapper asks core whether it can stream the initial
	// list (a watch-list); fake clients say they cannot.
	podInformer := cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return pods.List(ctx, o) },
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return pods.Watch(ctx, o)
		},
	}, core), &corev1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	w := &Watcher{
		target: target, sink: sink, log: log, metrics: m,
		pools:   dynFactory.ForResource(GVR),
		pods:    podInformer,
		podList: corelisters.NewPodLister(podInformer.GetIndexer()),
		changed: make(chan struct{}, 1),
		synced:  make(chan struct{}),
	}
	w.start = func(stop <-chan struct{}) {
		dynFactory.Start(stop)
		podInformer.Run(stop) // returns once stop is closed
		dynFactory.Shutdown() // waits for the pool informer's goroutines
	}
	notify := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { w.poke() },
		UpdateFunc: func(any, any) { w.poke() },
		DeleteFunc: func(any) { w.poke() },
	}
	if _, err := w.pools.Informer().AddEventHandler(notify); err != nil {
		return nil, fmt.Errorf("watching inferencepools: %w", err)
	}
	if _, err := w.pods.AddEventHandler(notify); err != nil {
		return nil, fmt.Errorf("watching pods: %w", err)
	}
	return w, nil
}

// poke asks Run to recompute; it never blocks (a pending recompute will
// see this change too).
func (w *Watcher) poke() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// Synced is closed once both caches have synced and the first membership
// has reached the sink.
func (w *Watcher) Synced() <-chan struct{} { return w.synced }

// Run starts the informers and keeps the sink's membership current until
// ctx ends; it returns after the informers have stopped. It returns an
// error when the caches cannot sync before ctx ends.
func (w *Watcher) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { w.start(ctx.Done()) })
	defer func() { cancel(); wg.Wait() }()
	if !cache.WaitForCacheSync(ctx.Done(), w.pools.Informer().HasSynced, w.pods.HasSynced) {
		return fmt.Errorf("syncing inferencepool %s and its pods: %w", w.target, errors.Join(ctx.Err(), context.Canceled))
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
	obj, err := w.pools.Lister().ByNamespace(w.target.Namespace).Get(w.target.Name)
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
