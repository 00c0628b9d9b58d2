package affinity_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/affinity"
	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/events/eventstest"
	"github.com/warmroute/warmroute/internal/testwait"
	"github.com/warmroute/warmroute/scorer"
)

// replayReplica is one router replica's process: its own connection, store
// keeping ids for maxAge, and share replaying the stream.
func replayReplica(t testing.TB, url, replica string, maxAge time.Duration) (*affinity.Store, *prometheus.Registry) {
	t.Helper()
	nc, err := bus.ConnectOptions{URL: url}.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	reg := prometheus.NewRegistry()
	m, err := affinity.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	s := affinity.New(affinity.Config{MaxAge: api.Duration(maxAge)}, affinity.Options{Metrics: m})
	sh, err := affinity.NewShare(s, nc, replica, slog.New(slog.NewTextHandler(t.Output(), nil)))
	if err != nil {
		t.Fatal(err)
	}
	sh.EnableReplay(affinity.Replay{})
	if err := sh.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sh.Close)
	return s, reg
}

func waitReplay(t testing.TB, reg *prometheus.Registry, result string) {
	t.Helper()
	testwait.Until(t, 30*time.Second, func() string {
		if eventstest.CounterValue(t, reg, "warmroute_affinity_replays_total", "result", result) != 1 {
			return "no " + result + " replay yet"
		}
		return ""
	})
}

func publishRaw(t testing.TB, nc *nats.Conn, replica string, data []byte) {
	t.Helper()
	subj, err := api.AffinitySubject("p", replica)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish(subj, data); err != nil {
		t.Fatal(err)
	}
}

// TestReplayRestartedReplica: replica b, starting after replica a learnt
// ids, replays the stream and routes each id to its latest endpoint; an
// expired or malformed message is skipped and counted. By the time b starts
// the stream is older than maxAge, so b's table is complete and an unknown
// id is answered as unknown (404), while a, which found the stream new,
// stays unsure. Real time: a short maxAge, with ids learnt after a third of
// it and b started once the stream is maxAge old.
func TestReplayRestartedReplica(t *testing.T) {
	const maxAge = 8 * time.Second
	ns, err := bus.StartEmbeddedWith(bus.EmbeddedOptions{Host: "127.0.0.1", JetStreamDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Close)
	created := time.Now()
	a, regA := replayReplica(t, ns.ClientURL(), "a-1", maxAge)
	waitReplay(t, regA, "partial")
	if _, r := a.Lookup("p", "resp_none", nil); r != scorer.AffinityUnsure {
		t.Fatalf("replica a on a new stream: unknown id is %v, want unsure", r)
	}
	raw, err := bus.ConnectOptions{URL: ns.ClientURL()}.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(raw.Close)
	time.Sleep(maxAge / 3)
	learnt := time.Now()
	a.Stored("p", "resp_1", "10.0.0.1:8000")
	a.Stored("p", "resp_2", "10.0.0.2:8000")
	// Published with the ids, not at the stream's creation: a message from
	// then would be maxAge old, and dropped by the stream, when b replays.
	publishRaw(t, raw, "x", []byte(`{"v":1,"pool":"p","id":"resp_bad"}`))
	eventstest.WaitStored(t, raw, affinity.DefaultStream, 3) // a's before x's, as the counts below assume
	later := time.Now().Add(10 * time.Millisecond)
	for _, m := range []api.AffinityMessage{
		{V: 1, Replica: "x", Pool: "p", ID: "resp_2", Endpoint: "10.0.0.3:8000", At: later.UnixNano()},
		{V: 1, Replica: "x", Pool: "p", ID: "resp_old", Endpoint: "10.0.0.1:8000", At: later.Add(-maxAge - time.Second).UnixNano()},
	} {
		b, err := m.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		publishRaw(t, raw, "x", b)
	}
	if err := raw.Flush(); err != nil {
		t.Fatal(err)
	}
	eventstest.WaitStored(t, raw, affinity.DefaultStream, 5)

	time.Sleep(time.Until(created.Add(maxAge + 100*time.Millisecond)))
	b, regB := replayReplica(t, ns.ClientURL(), "b-1", maxAge)
	waitReplay(t, regB, "complete")
	defer func() {
		if time.Since(learnt) >= maxAge {
			t.Errorf("the machine was too slow: the ids expired (%v) before the checks ended", time.Since(learnt))
		}
	}()
	for _, c := range []struct {
		id, want string
		r        scorer.AffinityResult
	}{
		{"resp_1", "10.0.0.1:8000", scorer.AffinityHit},
		{"resp_2", "10.0.0.3:8000", scorer.AffinityHit},
		{"resp_old", "", scorer.AffinityUnknown},
		{"resp_bad", "", scorer.AffinityUnknown},
		{"resp_none", "", scorer.AffinityUnknown},
	} {
		ep, r := b.Lookup("p", c.id, []string{"10.0.0.1:8000", "10.0.0.2:8000", "10.0.0.3:8000"})
		if ep != c.want || r != c.r {
			t.Errorf("replica b Lookup(%s) = %q, %v; want %q, %v", c.id, ep, r, c.want, c.r)
		}
	}
	for result, want := range map[string]float64{"applied": 3, "malformed": 1, "ignored": 1} {
		if got := eventstest.CounterValue(t, regB, "warmroute_affinity_replay_messages_total", "result", result); got != want {
			t.Errorf("replay_messages_total{result=%q} = %v, want %v", result, got, want)
		}
	}
	if got := eventstest.CounterValue(t, regB, "warmroute_affinity_learned_total", "source", "replay"); got != 3 {
		t.Errorf("learned_total{source=replay} = %v, want 3", got)
	}
}

// TestReplayWithoutJetStream: a server without JetStream fails the replay,
// counted; the share still shares live and the table stays unsure.
func TestReplayWithoutJetStream(t *testing.T) {
	ns, err := bus.StartEmbedded("127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Close)
	a, _ := replayReplica(t, ns.ClientURL(), "a-1", time.Hour)
	b, regB := replayReplica(t, ns.ClientURL(), "b-1", time.Hour)
	waitReplay(t, regB, "failed")
	a.Stored("p", "resp_1", "10.0.0.1:8000")
	testwait.Until(t, 30*time.Second, func() string {
		if ep, r := b.Lookup("p", "resp_1", []string{"10.0.0.1:8000"}); r != scorer.AffinityHit || ep != "10.0.0.1:8000" {
			return "replica b has not learnt the id live: " + r.String()
		}
		return ""
	})
	if _, r := b.Lookup("p", "resp_none", nil); r != scorer.AffinityUnsure {
		t.Fatalf("after a failed replay an unknown id is %v, want unsure", r)
	}
}
