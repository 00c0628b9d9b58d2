package subscriber_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/events/eventstest"
	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/internal/testwait"
)

const testStream = "KVTEST"

// startReplaying runs a subscriber that replays stream into a fresh index
// and waits for Ready.
func startReplaying(t testing.TB, nc *nats.Conn, stream string, reg *prometheus.Registry) (*subscriber.Subscriber, *index.Index) {
	t.Helper()
	ix, err := index.New(index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := subscriber.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := discovering
	cfg.JetStream = bus.JetStreamConfig{Enabled: true, Stream: stream}
	s := eventstest.StartSubscriber(t, nc, cfg, subscriber.Follow{Models: []string{testModel}, ReplayTimeout: 30 * time.Second},
		m, subscriber.NewIndexSink(ix, m), nil)
	select {
	case <-s.Ready():
	case <-time.After(60 * time.Second):
		t.Fatal("subscriber not ready within 60s")
	}
	return s, ix
}

func TestJetStreamReplay(t *testing.T) {
	type msg struct {
		seq   uint64
		reset bool
		data  []byte
	}
	tests := []struct {
		name         string
		stream       string // stream replayed; testStream is the one created
		msgs         []msg
		wantBlocks   int
		wantReplayed float64
		wantFailures float64
	}{
		{"empty stream", testStream, nil, 0, 0, 0},
		{"batches rebuild the index", testStream, []msg{{5, false, eventstest.StoredPayload(1, 0, 0, 2)},
			{6, false, eventstest.StoredPayload(3, 2, 32, 1)}}, 3, 2, 0},
		{"a retained reset clears what came before", testStream, []msg{{5, false, eventstest.StoredPayload(1, 0, 0, 2)},
			{0, true, nil}, {0, false, eventstest.StoredPayload(11, 0, 0, 1)}}, 1, 3, 0},
		{"a retained gap clears", testStream, []msg{{5, false, eventstest.StoredPayload(1, 0, 0, 2)},
			{9, false, eventstest.StoredPayload(11, 0, 1000, 1)}}, 0, 2, 0},
		{"a retained malformed batch clears", testStream, []msg{{5, false, eventstest.StoredPayload(1, 0, 0, 2)},
			{6, false, []byte{0xc1}}}, 0, 2, 0},
		{"missing stream: ready from live events", "NOSUCH", []msg{{5, false, eventstest.StoredPayload(1, 0, 0, 2)}}, 0, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nc := eventstest.JetStreamConn(t)
			if err := bus.EnsureStream(context.Background(), nc, bus.StreamConfig{Name: testStream,
				MaxAge: time.Minute}); err != nil {
				t.Fatal(err)
			}
			for _, m := range tc.msgs {
				eventstest.PublishTo(t, nc, sinkEndpoint, m.seq, m.reset, m.data)
			}
			if err := nc.Flush(); err != nil {
				t.Fatal(err)
			}
			eventstest.WaitStored(t, nc, testStream, len(tc.msgs))
			reg := prometheus.NewRegistry()
			_, ix := startReplaying(t, nc, tc.stream, reg)
			// Ready means caught up: no waiting beyond it.
			if got := lookup(t, ix, index.Identity{Model: testModel}, 3).Blocks(); got != tc.wantBlocks {
				t.Errorf("blocks at ready = %d, want %d", got, tc.wantBlocks)
			}
			if got := eventstest.PlainCounter(t, reg, "warmroute_events_replay_messages_total"); got != tc.wantReplayed {
				t.Errorf("replayed = %v, want %v", got, tc.wantReplayed)
			}
			if got := eventstest.PlainCounter(t, reg, "warmroute_events_replay_failures_total"); got != tc.wantFailures {
				t.Errorf("replay failures = %v, want %v", got, tc.wantFailures)
			}
			if n := eventstest.HistogramCount(t, reg, "warmroute_events_subscriber_event_lag_seconds"); n != 0 {
				t.Errorf("replayed batches recorded %d live-lag samples, want 0", n)
			}
		})
	}
}

func TestJetStreamReplayThenLive(t *testing.T) {
	nc := eventstest.JetStreamConn(t)
	if err := bus.EnsureStream(context.Background(), nc, bus.StreamConfig{Name: testStream}); err != nil {
		t.Fatal(err)
	}
	eventstest.PublishTo(t, nc, sinkEndpoint, 5, false, eventstest.StoredPayload(1, 0, 0, 1))
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	eventstest.WaitStored(t, nc, testStream, 1)
	_, ix := startReplaying(t, nc, testStream, prometheus.NewRegistry())
	// The next batch continues the replayed sequence, so it must apply
	// without a gap clearing the replayed block.
	eventstest.PublishTo(t, nc, sinkEndpoint, 6, false, eventstest.StoredPayload(2, 1, 16, 2))
	testwait.Until(t, 10*time.Second, testwait.That("live batch applied", func() bool {
		return lookup(t, ix, index.Identity{Model: testModel}, 3).Blocks() == 3
	}))
}

func TestEnsureStreamRejectsEmptyName(t *testing.T) {
	nc := eventstest.JetStreamConn(t)
	if err := bus.EnsureStream(context.Background(), nc, bus.StreamConfig{}); !errors.Is(err, bus.ErrInvalidConfig) {
		t.Fatalf("EnsureStream(no name) = %v, want ErrInvalidConfig", err)
	}
}
