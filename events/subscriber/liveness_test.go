package subscriber_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/eventstest"
	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/internal/testwait"
	"github.com/warmroute/warmroute/scorer"
)

// A Subscriber is the scorer's Liveness.
var _ scorer.Liveness = (*subscriber.Subscriber)(nil)

func beatEngine(t *testing.T, nc interface {
	Publish(string, []byte) error
}, endpoint string, rank int, connected bool, interval time.Duration) {
	t.Helper()
	subj, _ := api.HeartbeatSubject(testModel, endpoint)
	body, _ := json.Marshal(api.Heartbeat{Endpoint: endpoint, Model: testModel, Relay: "r", DPRank: rank,
		EngineConnected: connected, Interval: api.Duration(interval), SentAt: time.Now()})
	if err := nc.Publish(subj, body); err != nil {
		t.Fatal(err)
	}
}

// TestDown: an endpoint is down while any rank's relay reports its engine
// disconnected, and after its relays expired until one is heard again; an
// endpoint never heard of is not down.
func TestDown(t *testing.T) {
	nc := eventstest.Connect(t)
	s := runSubscriber(t, nc, &eventstest.Sink{}, &eventstest.Membership{})
	const ep, quiet = "10.2.0.1:8000", "10.2.0.2:8000"
	wantDown := func(ep, reason string) {
		t.Helper()
		testwait.Until(t, 10*time.Second, func() string {
			if r, down := s.Down(ep); reason == "" && down {
				return ep + " is down (" + r + "), want it live"
			} else if reason != "" && r != reason {
				return ep + " down reason " + r + ", want " + reason
			}
			return ""
		})
	}
	if _, down := s.Down("10.9.9.9:1"); down {
		t.Fatal("an endpoint never heard of is down")
	}
	beatEngine(t, nc, ep, 0, true, time.Hour)
	beatEngine(t, nc, ep, 1, true, time.Hour)
	wantDown(ep, "")
	beatEngine(t, nc, ep, 1, false, time.Hour) // rank 1's engine went away
	wantDown(ep, subscriber.DownDisconnected)
	beatEngine(t, nc, ep, 1, true, time.Hour)
	wantDown(ep, "")

	beatEngine(t, nc, quiet, 0, true, 30*time.Millisecond) // then silence: expires after 3 intervals
	wantDown(quiet, subscriber.DownExpired)
	if _, ok := s.Freshness(quiet); ok {
		t.Fatal("an expired endpoint still has freshness")
	}
	beatEngine(t, nc, quiet, 0, true, time.Hour) // back
	wantDown(quiet, "")
}

// TestUnknownIsNotDown: a relay that has no evidence about its engine yet
// (it listens and the engine has sent nothing) does not take the endpoint
// out of routing.
func TestUnknownIsNotDown(t *testing.T) {
	nc := eventstest.Connect(t)
	s := runSubscriber(t, nc, &eventstest.Sink{}, &eventstest.Membership{})
	const ep = "10.2.0.3:8000"
	subj, _ := api.HeartbeatSubject(testModel, ep)
	body, _ := json.Marshal(api.Heartbeat{Endpoint: ep, Model: testModel, Relay: "r", EngineUnknown: true,
		Interval: api.Duration(time.Hour), SentAt: time.Now()})
	if err := nc.Publish(subj, body); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 10*time.Second, testwait.That("heartbeat applied", func() bool { _, ok := s.Freshness(ep); return ok }))
	if r, down := s.Down(ep); down {
		t.Fatalf("an endpoint whose relay has no evidence yet is down (%s)", r)
	}
}
