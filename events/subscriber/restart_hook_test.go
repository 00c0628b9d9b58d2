package subscriber_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/eventstest"
	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/internal/testwait"
)

// TestOnEngineRestart: the hook hears the endpoint of each reset that says
// the engine restarted, and nothing for other resets or batches.
func TestOnEngineRestart(t *testing.T) {
	nc := eventstest.Connect(t)
	s, err := subscriber.New(discovering, subscriber.Follow{Models: []string{testModel}}, nc, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var heard []string
	s.OnEngineRestart(func(src subscriber.Source) {
		mu.Lock()
		heard = append(heard, src.Model+"/"+src.Endpoint)
		mu.Unlock()
	})
	sink := &eventstest.Sink{}
	if err := s.Start(context.Background(), sink, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	const a, b = "10.2.0.1:8000", "10.2.0.2:8000"
	publish(t, nc, a, stored("r", 1, 1))
	publish(t, nc, a, msgOp{relay: "r", seq: 2, reset: api.ResetGap})
	publish(t, nc, b, msgOp{relay: "r", seq: 1, reset: api.ResetReconnect})
	publish(t, nc, b, msgOp{relay: "r", seq: 0, reset: api.ResetRestart})
	publish(t, nc, a, stored("r", 3, 2)) // applied after the resets: they are all handled
	src := subscriber.Source{Model: testModel, Endpoint: a}
	testwait.Until(t, 10*time.Second, testwait.That("last batch applied", func() bool {
		bl := sink.Blocks(src)
		return len(bl) == 1 && bl[0] == 2
	}))
	publish(t, nc, b, stored("r", 1, 3))
	testwait.Until(t, 10*time.Second, testwait.That("b's batch applied", func() bool {
		return len(sink.Blocks(subscriber.Source{Model: testModel, Endpoint: b})) == 1
	}))
	mu.Lock()
	defer mu.Unlock()
	if want := testModel + "/" + b; len(heard) != 1 || heard[0] != want {
		t.Fatalf("heard %v, want [%s]", heard, want)
	}
}
