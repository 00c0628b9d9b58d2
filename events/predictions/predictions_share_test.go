package predictions_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/events/eventstest"
	"github.com/warmroute/warmroute/events/predictions"
	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/index/ttl"
	"github.com/warmroute/warmroute/internal/testclock"
	"github.com/warmroute/warmroute/internal/testwait"
)

const predictionStream = "WARMROUTE_PREDICTIONS_TEST"

// TestReplicasSharePredictions runs two routers on one embedded NATS with
// JetStream: a decision on A is matched speculatively on B with A's expiry,
// B's own TTL accounting stays empty, an engine BlockStored confirms the
// prediction on both, and B restarted within the TTL replays A's
// predictions from the stream.
func TestReplicasSharePredictions(t *testing.T) {
	nc := eventstest.JetStreamConn(t)
	if err := predictions.EnsureStream(context.Background(), nc,
		predictions.StreamConfig{Name: predictionStream, MaxAge: time.Minute}); err != nil {
		t.Fatal(err)
	}
	clock := testclock.New(time.Now())
	start := clock.Now()
	a := startReplica(t, nc, replicaOptions{name: "a", clock: clock, stream: predictionStream})
	b := startReplica(t, nc, replicaOptions{name: "b", clock: clock, stream: predictionStream})
	d1, d2 := a.decide(t, 1000, 4), a.decide(t, 5000, 4)
	testwait.Until(t, 10*time.Second, testwait.That("B matches A's predictions", func() bool {
		return b.match(t, d1.Endpoint, 1000, 4).Speculative == 4 && b.match(t, d2.Endpoint, 5000, 4).Speculative == 4
	}))
	if got := b.endings(); got != (ttl.Endings{}) {
		t.Fatalf("B's TTL endings after applying A's predictions = %+v, want none", got)
	}
	testwait.Until(t, 10*time.Second, testwait.That("A skips its own messages", func() bool {
		return eventstest.CounterValue(t, a.reg, "warmroute_events_predictions_received_total", "result", "own") == 2
	}))

	b.stop() // B restarts within the TTL: a new index, a new replica id
	b = startReplica(t, nc, replicaOptions{name: "b", clock: clock, stream: predictionStream})
	if m := b.match(t, d1.Endpoint, 1000, 4); m.Speculative != 4 {
		t.Fatalf("restarted B's match after replay = %+v, want 4 speculative", m)
	}

	eventstest.PublishTo(t, nc, d2.Endpoint, 0, false, eventstest.StoredPayload(1, 0, 5000, 4))
	testwait.Until(t, 10*time.Second, testwait.That("BlockStored confirms on both", func() bool {
		return a.match(t, d2.Endpoint, 5000, 4).Confirmed == 4 && b.match(t, d2.Endpoint, 5000, 4).Confirmed == 4
	}))
	checkConfirmedOnce(t, a, b)

	// Both expire d1 at A's expiry: one nanosecond before it still matches.
	expiry := start.Add(2 * time.Second)
	clock.Set(expiry.Add(-time.Nanosecond))
	for name, r := range map[string]*replica{"A": a, "B": b} {
		if m := r.match(t, d1.Endpoint, 1000, 4); m.Speculative != 4 {
			t.Errorf("%s just before the expiry: %+v, want 4 speculative", name, m)
		}
	}
	clock.Set(expiry)
	for name, r := range map[string]*replica{"A": a, "B": b} {
		if m := r.match(t, d1.Endpoint, 1000, 4); m != (index.Match{}) {
			t.Errorf("%s at the expiry: %+v, want nothing", name, m)
		}
	}
}

// checkConfirmedOnce: A, the decider, counts the confirmation as its own;
// B counts it only as a remote outcome, so the replicas' sum is one.
func checkConfirmedOnce(t *testing.T, a, b *replica) {
	t.Helper()
	if got := a.endings(); got.Confirmed != 4 {
		t.Errorf("A's TTL endings = %+v, want 4 confirmed", got)
	}
	if got := b.endings(); got != (ttl.Endings{}) {
		t.Errorf("B's TTL endings = %+v, want none", got)
	}
	sa, sb := a.ix.Stats(), b.ix.Stats()
	if sa.Outcomes[index.Confirmed] != 4 || sa.RemoteOutcomes != [index.Dropped + 1]int64{} {
		t.Errorf("A's index outcomes %v remote %v, want 4 local confirmed", sa.Outcomes, sa.RemoteOutcomes)
	}
	if sb.RemoteOutcomes[index.Confirmed] != 4 || sb.Outcomes != [index.Dropped + 1]int64{} {
		t.Errorf("B's index outcomes %v remote %v, want 4 remote confirmed", sb.Outcomes, sb.RemoteOutcomes)
	}
}

// TestPredictionsNATSOutage: with NATS down, decisions still commit and
// speculate locally at once, and every prediction is counted as dropped.
func TestPredictionsNATSOutage(t *testing.T) {
	ns, err := bus.StartEmbedded("127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := bus.ConnectOptions{URL: ns.ClientURL()}.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	a := startReplica(t, nc, replicaOptions{name: "a", clock: testclock.New(time.Now()), queue: 4})
	ns.Close()
	testwait.Until(t, 10*time.Second, testwait.That("client notices the outage", func() bool { return !nc.IsConnected() }))
	const n = 50
	for i := range n {
		d := a.decide(t, 100_000*(i+1), 2)
		if m := a.match(t, d.Endpoint, 100_000*(i+1), 2); m.Speculative != 2 {
			t.Fatalf("decision %d not speculated locally: %+v", i, m)
		}
		d.Release()
	}
	dropped := func() float64 {
		return eventstest.CounterValue(t, a.reg, "warmroute_events_predictions_dropped_total", "reason", "queue_full") +
			eventstest.CounterValue(t, a.reg, "warmroute_events_predictions_dropped_total", "reason", "publish_error")
	}
	testwait.Until(t, 10*time.Second, testwait.That("every prediction counted as dropped", func() bool { return dropped() == n }))
	if got := eventstest.PlainCounter(t, a.reg, "warmroute_events_predictions_published_total"); got != 0 {
		t.Errorf("published %v predictions during the outage", got)
	}
}

func TestShareRejects(t *testing.T) {
	nc := eventstest.Connect(t)
	ix, _ := index.New(index.Options{})
	tests := []struct {
		name string
		cfg  predictions.Options
		ix   *index.Index
	}{
		{"no replica", predictions.Options{}, ix},
		{"no index", predictions.Options{Replica: "r"}, nil},
		{"negative queue", predictions.Options{Replica: "r", Config: predictions.Config{QueueSize: -1}}, ix},
		{"negative cap", predictions.Options{Replica: "r", MaxTTL: -time.Second}, ix},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := predictions.New(tt.cfg, nc, nil, nil)
			if err == nil {
				t.Cleanup(p.Close)
				err = p.Start(context.Background(), tt.ix)
			}
			if !errors.Is(err, predictions.ErrInvalidConfig) {
				t.Fatalf("err = %v, want ErrInvalidConfig", err)
			}
		})
	}
	if err := predictions.EnsureStream(context.Background(), nc, predictions.StreamConfig{}); !errors.Is(err, predictions.ErrInvalidConfig) {
		t.Errorf("EnsureStream(no name) = %v, want ErrInvalidConfig", err)
	}
}

// TestShareBeforeStart: the scorer may hand predictions to a share that is
// not started yet (serve builds the share before the pipeline and starts it
// after); they queue, and Close without Start returns at once.
func TestShareBeforeStart(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := predictions.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	p, err := predictions.New(predictions.Options{Replica: "r", Config: predictions.Config{QueueSize: 1}},
		eventstest.Connect(t), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Predicted(index.Prediction{Endpoint: "10.0.0.1:8000", Keys: []index.Key{1}})
	p.Predicted(index.Prediction{Endpoint: "10.0.0.1:8000", Keys: []index.Key{2}}) // queue full
	if got := eventstest.CounterValue(t, reg, "warmroute_events_predictions_dropped_total", "reason", "queue_full"); got != 1 {
		t.Fatalf("dropped{queue_full} = %v, want 1", got)
	}
	p.Close()
	p.Close()
}
