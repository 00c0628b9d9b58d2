package events_test

import (
	"context"
	"sync"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/warmroute/warmroute/events"
)

// runInBackground runs run until the test ends (or stop is called first),
// then cancels it, waits for it and reports any error it returned under
// name. stop is idempotent.
func runInBackground(t testing.TB, name string, run func(context.Context) error) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("%s Run() = %v", name, err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// connectEmbedded starts an embedded NATS server configured by o and
// connects to it; both close when the test ends.
func connectEmbedded(t testing.TB, o events.EmbeddedOptions) *nats.Conn {
	t.Helper()
	ns, err := events.StartEmbeddedWith(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Close)
	nc, err := events.ConnectOptions{URL: ns.ClientURL()}.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}
