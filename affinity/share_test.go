package affinity_test

import (
	"context"
	"testing"
	"time"

	"github.com/warmroute/warmroute/affinity"
	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/internal/testclock"
	"github.com/warmroute/warmroute/internal/testwait"
	"github.com/warmroute/warmroute/scorer"
)

func startReplica(t *testing.T, url, replica string) *affinity.Store {
	t.Helper()
	c, err := bus.Open(bus.Config{URL: url}, replica, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	s := affinity.New(affinity.Config{}, affinity.Options{})
	sh, err := affinity.NewShare(s, c.Conn(), replica, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sh.Close)
	return s
}

// TestShareBetweenReplicas: an id learnt by one replica routes on the other;
// a malformed message changes nothing.
func TestShareBetweenReplicas(t *testing.T) {
	ns, err := bus.StartEmbedded("127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Close)
	a := startReplica(t, ns.ClientURL(), "a-1")
	b := startReplica(t, ns.ClientURL(), "b-1")
	raw, err := bus.Open(bus.Config{URL: ns.ClientURL()}, "forger", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(raw.Close)
	subj, _ := api.AffinitySubject("p", "x")
	if err := raw.Conn().Publish(subj, []byte(`{"v":1,"pool":"p","id":"resp_bad"}`)); err != nil {
		t.Fatal(err)
	}
	a.Stored("p", "resp_1", "10.0.0.1:8000")
	testwait.Until(t, 30*time.Second, func() string {
		if ep, r := b.Lookup("p", "resp_1", []string{"10.0.0.1:8000"}); r != scorer.AffinityHit || ep != "10.0.0.1:8000" {
			return "replica b has not learnt replica a's response id: " + r.String()
		}
		return ""
	})
	if b.Len() != 1 || a.Len() != 1 {
		t.Fatalf("Len a=%d b=%d, want 1 each (the malformed message recorded nothing)", a.Len(), b.Len())
	}
}

// TestShareGapMakesTableUnsure: while NATS is away, ids other replicas
// learn are missed, so an unknown id is unsure (routed on load), not
// answered 404, even in a table that was complete.
func TestShareGapMakesTableUnsure(t *testing.T) {
	ns, err := bus.StartEmbedded("127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	c, err := bus.Open(bus.Config{URL: ns.ClientURL()}, "gap", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	clk := testclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := affinity.New(affinity.Config{MaxAge: api.Duration(time.Hour)}, affinity.Options{Now: clk.Now})
	sh, err := affinity.NewShare(s, c.Conn(), "gap-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sh.Close)
	clk.Advance(time.Hour)
	if _, r := s.Lookup("p", "resp_x", nil); r != scorer.AffinityUnknown {
		t.Fatalf("connected, complete table: %v, want unknown", r)
	}
	ns.Close()
	testwait.Until(t, 10*time.Second, func() string {
		if c.Conn().IsConnected() {
			return "still connected"
		}
		return ""
	})
	if _, r := s.Lookup("p", "resp_x", nil); r != scorer.AffinityUnsure {
		t.Fatalf("NATS down: %v, want unsure", r)
	}
	clk.Advance(30 * time.Minute)
	if _, r := s.Lookup("p", "resp_x", nil); r != scorer.AffinityUnsure {
		t.Fatalf("half a window after the gap: %v, want unsure", r)
	}
}
