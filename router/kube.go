package router

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/dynamic"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/inferencepool"
	"github.com/warmroute/warmroute/scorer"
)

// kubeClients builds the Kubernetes clients: from $KUBECONFIG when set (a
// router run outside the cluster), else the pod's service account. Tests
// replace it with fakes.
var kubeClients = func() (dynamic.Interface, corev1client.PodsGetter, error) {
	var cfg *rest.Config
	var err error
	if path := os.Getenv("KUBECONFIG"); path != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", path)
	} else {
		cfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("configuring the kubernetes client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("creating the kubernetes dynamic client: %w", err)
	}
	kube, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("creating the kubernetes client: %w", err)
	}
	return dyn, kube, nil
}

// serviceAccountNamespace is where a pod's own namespace is mounted.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// ownNamespace is the namespace of an InferencePool named without one:
// $POD_NAMESPACE (the chart sets it from the downward API), else the
// service account's.
func ownNamespace() (string, error) {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns, nil
	}
	b, err := os.ReadFile(serviceAccountNamespace)
	if err != nil || strings.TrimSpace(string(b)) == "" {
		return "", fmt.Errorf("finding the router's namespace for an inferencePool without one: set POD_NAMESPACE or name it NAMESPACE/NAME: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// poolSink applies an InferencePool's membership to a router pool and
// forgets the cache state of endpoints that left.
type poolSink struct {
	pools *scorer.Pools
	ix    *index.Index
	name  string
	log   *slog.Logger
	// refused holds members whose role label is unknown (kuberoles.go);
	// owned by the watcher's goroutine, like every call on the sink.
	refused map[string]bool
}

func (s *poolSink) SetMembers(eps []string) { s.pools.SetEndpoints(s.name, s.admitted(eps)) }

func (s *poolSink) Left(ep string) {
	if _, err := s.ix.ClearEndpoint(ep); err != nil {
		s.log.Warn("forgetting an endpoint that left its inferencepool", "endpoint", ep, "err", err)
	}
}

// kubeMembership is the InferencePool watchers of the pools that name one;
// nil when none does.
type kubeMembership struct {
	watchers []*inferencepool.Watcher
}

func newKubeMembership(cfg Config, p *pipeline, reg prometheus.Registerer, log *slog.Logger) (*kubeMembership, error) {
	var targets []inferencepool.Target
	var names []string
	for _, pc := range cfg.Pools {
		if pc.InferencePool == "" {
			continue
		}
		ns, name, ok := strings.Cut(pc.InferencePool, "/")
		if !ok {
			var err error
			if ns, err = ownNamespace(); err != nil {
				return nil, err
			}
			name = pc.InferencePool
		}
		targets, names = append(targets, inferencepool.Target{Namespace: ns, Name: name}), append(names, pc.Name)
	}
	if len(targets) == 0 {
		return nil, nil
	}
	dyn, kube, err := kubeClients()
	if err != nil {
		return nil, err
	}
	m, err := inferencepool.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	km := &kubeMembership{}
	for i, tg := range targets {
		sink := &poolSink{pools: p.pools, ix: p.index, name: names[i], log: log}
		w, err := inferencepool.New(dyn, kube, tg, sink, m, log)
		if err != nil {
			return nil, err
		}
		km.watchers = append(km.watchers, w)
	}
	return km, nil
}

// run runs every watcher until ctx ends; the first error is returned after
// all have stopped.
func (k *kubeMembership) run(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make([]error, len(k.watchers))
	for i, w := range k.watchers {
		wg.Go(func() { errs[i] = w.Run(ctx) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// waitSynced blocks until every watcher has synced or ctx ends.
func (k *kubeMembership) waitSynced(ctx context.Context) {
	for _, w := range k.watchers {
		select {
		case <-w.Synced():
		case <-ctx.Done():
			return
		}
	}
}
