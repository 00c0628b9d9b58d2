package relay_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/events/eventstest"
	"github.com/warmroute/warmroute/events/relay"
)

// BenchmarkRelayResync measures a starting relay republishing an engine
// replay buffer of n batches: from Run to the last batch delivered to a NATS
// subscriber (engine_batches/s is the republish rate; vLLM's default buffer
// holds 10000).
func BenchmarkRelayResync(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run("batches="+strconv.Itoa(n), func(b *testing.B) { benchResync(b, n) })
	}
}

func benchResync(b *testing.B, n int) {
	e := startFakeEngine(b, n)
	e.publish(n, false)
	nc := eventstest.ConnectEmbedded(b, bus.EmbeddedOptions{Host: "127.0.0.1"})
	got := make(chan *nats.Msg, n+16)
	subj, _ := api.EventSubject(testModel, resyncEndpoint)
	sub, err := nc.ChanSubscribe(subj, got)
	if err != nil {
		b.Fatal(err)
	}
	defer sub.Unsubscribe()
	b.ResetTimer()
	for range b.N {
		r, err := relay.New(relayConfig(e), nc, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		stop := runForBench(r)
		for i := range n {
			select {
			case <-got:
			case <-time.After(30 * time.Second):
				b.Fatalf("got %d of %d republished batches", i, n)
			}
		}
		b.StopTimer()
		stop()
		drain(got)
		b.StartTimer()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "engine_batches/s")
}

// runForBench runs relay until the returned stop is called.
func runForBench(r *relay.Relay) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = r.Run(ctx); close(done) }()
	return func() { cancel(); <-done }
}

func drain(c chan *nats.Msg) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}
