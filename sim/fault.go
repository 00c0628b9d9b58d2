package sim

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Fault injection headers. They pass through Envoy unchanged, so an end-to-end
// test can make one chosen request fail or stall on whichever endpoint serves it.
const (
	// statusHeader asks for an error answer with this status (400-599).
	statusHeader = "x-sim-status"
	// delayHeader asks the simulator to wait this Go duration before
	// answering.
	delayHeader = "x-sim-delay"
	// failPrefillHeader set to "true" makes the request fail after
	// admission, before any block is stored.
	failPrefillHeader = "x-sim-fail-prefill"
	// silentStoreHeader set to "true" makes the request answer normally
	// but store and publish no block: a failure the router cannot see.
	silentStoreHeader = "x-sim-silent-store"
)

// fault is what a request's headers asked for; the zero value asks nothing.
type fault struct {
	delay       time.Duration
	status      int
	failPrefill bool
	silentStore bool
}

func parseFault(h http.Header) (fault, error) {
	var f fault
	if v := h.Get(delayHeader); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fault{}, fmt.Errorf("%w: %s must be a non-negative duration such as 2s, got %q", ErrBadFaultHeader, delayHeader, v)
		}
		f.delay = d
	}
	if v := h.Get(statusHeader); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 400 || n > 599 {
			return fault{}, fmt.Errorf("%w: %s must be an error status 400-599, got %q", ErrBadFaultHeader, statusHeader, v)
		}
		f.status = n
	}
	if v := h.Get(failPrefillHeader); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fault{}, fmt.Errorf("%w: %s must be true or false, got %q", ErrBadFaultHeader, failPrefillHeader, v)
		}
		f.failPrefill = b
	}
	if v := h.Get(silentStoreHeader); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fault{}, fmt.Errorf("%w: %s must be true or false, got %q", ErrBadFaultHeader, silentStoreHeader, v)
		}
		f.silentStore = b
	}
	return f, nil
}

// apply waits the requested delay, returning early with ctx's error, then
// fails with the requested status if any.
func (f fault) apply(ctx context.Context) error {
	if err := sleep(ctx, f.delay); err != nil {
		return fmt.Errorf("injecting delay: %w", err)
	}
	if f.status != 0 {
		return injectedFault{status: f.status}
	}
	return nil
}
