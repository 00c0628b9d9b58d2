package sim

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/events/eventstest"
	"github.com/warmroute/warmroute/events/relay"
	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/internal/testwait"
)

// relayToSink runs the project's relay and subscriber between the
// simulator and a sink, over an embedded NATS server.
func relayToSink(t *testing.T, s *Server, relayReg *prometheus.Registry) (*eventstest.Sink, subscriber.Source) {
	t.Helper()
	ns, err := bus.StartEmbedded("127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Close)
	nc, err := bus.ConnectOptions{URL: ns.ClientURL()}.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	const model, endpoint = DefaultModel, "127.0.0.1:8000"
	m, err := relay.NewMetrics(relayReg)
	if err != nil {
		t.Fatal(err)
	}
	rl, err := relay.New(relay.Config{EventsEndpoint: s.Engine().EventsAddr(),
		ReplayEndpoint: s.Engine().ReplayAddr(), Model: model, Endpoint: endpoint,
		HeartbeatInterval: 50 * time.Millisecond, ReplayTimeout: 15 * time.Second}, nc, m, nil) // generous: a loaded machine must not turn a replay into a reset
	if err != nil {
		t.Fatal(err)
	}
	sink := &eventstest.Sink{}
	eventstest.StartSubscriber(t, nc, subscriber.Config{}, subscriber.Follow{Models: []string{model},
		Endpoints: map[string][]string{model: {endpoint}}}, nil, sink, nil)
	eventstest.Run(t, "relay", rl.Run)
	return sink, subscriber.Source{Model: model, Endpoint: endpoint}
}

// converged waits until the sink holds exactly the engine's cached blocks
// while the test keeps the engine publishing.
func converged(t *testing.T, s *Server, sink *eventstest.Sink, src subscriber.Source, poke func()) {
	t.Helper()
	testwait.Until(t, 10*time.Second, func() string {
		want := slices.Sorted(maps.Keys(setOf(s.Engine().CacheState().Hashes())))
		if got := sink.Blocks(src); !slices.Equal(got, want) || len(want) == 0 {
			poke()
			return fmt.Sprintf("sink %v, engine %v", got, want)
		}
		return ""
	})
}

func setOf(hs []uint64) map[uint64]bool {
	m := map[uint64]bool{}
	for _, h := range hs {
		m[h] = true
	}
	return m
}

func TestRelayFollowsEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("starts NATS")
	}
	s, url := eventServer(t, Options{NumBlocks: 6})
	relayReg := prometheus.NewRegistry()
	sink, src := relayToSink(t, s, relayReg)
	n := 0
	poke := func() { n++; complete(t, url, longPrompt("p"+string(rune('a'+n%26)), 9), nil) }
	t.Run("live events", func(t *testing.T) { converged(t, s, sink, src, poke) })
	t.Run("gap from a pipeline cut is replayed", func(t *testing.T) {
		dropped := s.Engine().pub.metrics.batches.WithLabelValues("dropped_paused")
		before := testutil.ToFloat64(dropped)
		s.Engine().PauseEvents(true)
		complete(t, url, longPrompt("cut", 9), nil)
		// Batches are delivered by the publisher's goroutine, which checks the
		// pause when it sends: unpausing before it dropped one makes no gap.
		testwait.Until(t, 10*time.Second, func() string {
			if got := testutil.ToFloat64(dropped); got <= before {
				return "no batch dropped while paused yet"
			}
			return ""
		})
		s.Engine().PauseEvents(false)
		converged(t, s, sink, src, poke)
		if n := relayGaps(t, relayReg, "replayed"); n != 1 {
			t.Fatalf("relay replayed %v gaps, want 1", n)
		}
	})
	t.Run("engine restart resets the endpoint", func(t *testing.T) {
		s.Engine().Restart()
		converged(t, s, sink, src, poke)
	})
}

// relayGaps reads the relay's gap counter for one outcome.
func relayGaps(t *testing.T, reg *prometheus.Registry, outcome string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "warmroute_events_relay_gaps_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if m.GetLabel()[0].GetValue() == outcome {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
