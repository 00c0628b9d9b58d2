package inferencepool

import (
	"context"
	"errors"
	"io"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"
)

// Resources as named in the watch error metric and logs.
const (
	resourcePools = "inferencepools"
	resourcePods  = "pods"
)

// watchErrors keeps the last list/watch failure of each informer, so that a
// watcher that cannot sync says why (a missing RBAC permission, a missing
// CRD) instead of only timing out.
type watchErrors struct {
	mu   sync.Mutex
	last map[string]error // resource -> its last failure (kept after a later success)
}

// reason classifies a list/watch failure for the metric: bounded values.
func reason(err error) string {
	switch {
	case apierrors.IsForbidden(err):
		return "forbidden"
	case apierrors.IsUnauthorized(err):
		return "unauthorized"
	case apierrors.IsNotFound(err):
		return "not_found"
	default:
		return "other"
	}
}

// benign reports the failures a reflector recovers from by itself without
// anything being wrong: an expired resource version, a watch closed.
func benign(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// handler is the informer's watch error handler for resource: it counts
// the failure, logs it when it differs from the resource's previous one
// (a reflector retries with backoff; the log is not flooded) and keeps it
// for Run's sync error.
func (w *Watcher) handler(resource string) cache.WatchErrorHandlerWithContext {
	return func(_ context.Context, _ *cache.Reflector, err error) {
		if benign(err) {
			return
		}
		w.metrics.watchErrors.WithLabelValues(resource, reason(err)).Inc()
		w.errs.mu.Lock()
		prev := w.errs.last[resource]
		if w.errs.last == nil {
			w.errs.last = map[string]error{}
		}
		w.errs.last[resource] = err
		w.errs.mu.Unlock()
		if prev == nil || prev.Error() != err.Error() {
			w.log.Warn("inferencepool watcher cannot list or watch", "pool", w.target.String(),
				"resource", resource, "reason", reason(err), "err", err)
		}
	}
}

// lastErrors joins the last failure of each resource, for Run's error.
func (w *Watcher) lastErrors() error {
	w.errs.mu.Lock()
	defer w.errs.mu.Unlock()
	var errs []error
	for _, r := range []string{resourcePools, resourcePods} {
		if err := w.errs.last[r]; err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// watching records whether each resource's last watch request opened, so
// that Run syncs only with live watches: with list but not watch allowed, a
// reflector fills its cache from a list and then fails every watch.
type watching struct {
	mu     sync.Mutex
	open   map[string]bool
	change chan struct{} // poked on every change; one pending at most
}

func newWatching() *watching {
	return &watching{open: map[string]bool{}, change: make(chan struct{}, 1)}
}

func (s *watching) set(resource string, open bool) {
	s.mu.Lock()
	s.open[resource] = open
	s.mu.Unlock()
	select {
	case s.change <- struct{}{}:
	default:
	}
}

func (s *watching) all() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open[resourcePools] && s.open[resourcePods]
}

// wait blocks until both resources' watches are open (true) or ctx ends
// (false).
func (s *watching) wait(ctx context.Context) bool {
	for !s.all() {
		select {
		case <-ctx.Done():
			return false
		case <-s.change:
		}
	}
	return true
}
