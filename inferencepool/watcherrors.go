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
