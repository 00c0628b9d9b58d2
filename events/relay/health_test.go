package relay_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/events/eventstest"
	"github.com/warmroute/warmroute/events/relay"
	"github.com/warmroute/warmroute/internal/testwait"
)

// TestListenModeProvesTheEngine: a relay that binds its events socket and
// waits for the engine to connect does not report the engine connected
// because the socket is bound; with no engine there, heartbeats say
// disconnected.
func TestListenModeProvesTheEngine(t *testing.T) {
	nc := eventstest.Connect(t)
	tap := tapRelay(t, nc, testModel, resyncEndpoint)
	addr := unusedAddr(t)
	runRelay(t, nc, relay.Config{EventsEndpoint: "tcp://" + addr, ListenEvents: true, Model: testModel,
		Endpoint: resyncEndpoint, HeartbeatInterval: 50 * time.Millisecond})
	for range 5 {
		if h := nextHeartbeat(t, tap, func(api.Heartbeat) bool { return true }); h.EngineConnected || !h.EngineUnknown {
			t.Fatalf("listening relay with no engine reports %+v, want not connected and unknown", h)
		}
	}
}

// TestHealthProbeGatesConnected: with --engine-health-url the engine counts
// as connected only while its health endpoint answers 200. When it answers
// again, the relay checks the engine behind its socket against the last
// batch it forwarded, so an engine that restarted while unhealthy (and whose
// sockets never failed) starts its stream over.
func TestHealthProbeGatesConnected(t *testing.T) {
	var healthy atomic.Bool
	healthy.Store(true)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !healthy.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(hs.Close)
	nc := eventstest.Connect(t)
	tap := tapRelay(t, nc, testModel, resyncEndpoint)
	e := startFakeEngine(t, 100)
	cfg := relayConfig(e)
	cfg.HealthURL = hs.URL + "/health"
	rr := runRelay(t, nc, cfg)
	e.waitReplays(1)
	liveUntilForwarded(t, e, tap)
	connected := func(want bool) {
		t.Helper()
		nextHeartbeat(t, tap, func(h api.Heartbeat) bool { return h.EngineConnected == want })
	}
	connected(true)
	healthy.Store(false)
	connected(false)
	if n := eventstest.PlainCounter(t, rr.reg, "warmroute_events_relay_engine_health_failures_total"); n == 0 {
		t.Fatal("failed probes not counted")
	}
	e.restart() // the engine came back as a new process: its sockets look the same
	healthy.Store(true)
	connected(true)
	got, newest := liveUntilForwarded(t, e, tap)
	want := append([]string{"reset reconnect 0"}, batches(0, newest)...)
	if !slices.Equal(got, want) {
		t.Fatalf("after the engine came back healthy the relay published\n%q\nwant\n%q", got, want)
	}
	_ = fmt.Sprint()
}

// TestDialFailureIsKnownDown: before its first connection a relay whose
// dial finds nothing listening reports the engine unknown (it may still be
// starting); once an engine it was connected to stops accepting, it reports
// it disconnected and known, so routers stop sending it requests.
func TestDialFailureIsKnownDown(t *testing.T) {
	nc := eventstest.Connect(t)
	tap := tapRelay(t, nc, testModel, resyncEndpoint)
	runRelay(t, nc, relay.Config{EventsEndpoint: "tcp://" + unusedAddr(t), Model: testModel,
		Endpoint: resyncEndpoint, HeartbeatInterval: 50 * time.Millisecond})
	for range 3 {
		if h := nextHeartbeat(t, tap, func(api.Heartbeat) bool { return true }); h.EngineConnected || !h.EngineUnknown {
			t.Fatalf("never connected, the relay reports %+v, want unknown", h)
		}
	}

	tap2 := tapRelay(t, nc, testModel, sinkEndpoint)
	e := startFakeEngine(t, 100)
	cfg := relayConfig(e)
	cfg.Endpoint = sinkEndpoint
	runRelay(t, nc, cfg)
	nextHeartbeat(t, tap2, func(h api.Heartbeat) bool { return h.EngineConnected })
	_ = e.pub.Close() // the engine goes away
	nextHeartbeat(t, tap2, func(h api.Heartbeat) bool { return !h.EngineConnected && !h.EngineUnknown })
}

// unusedAddr returns a loopback address nothing listens on (a moment ago),
// below the kernel's ephemeral range: a port found free inside it may become
// another test's outgoing connection's port before the relay binds it (seen
// in CI: the relay could not listen for 30 s).
func unusedAddr(t *testing.T) string {
	t.Helper()
	ports, err := harness.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	return harness.Addr(ports[0])
}

// TestEngineLossIsHeartbeatedAtOnce: a change of what heartbeats say of the
// engine goes out at once, not at the next tick, so routers learn of a dead
// engine as soon as the relay does. With an hour between ticks only the
// first heartbeat is periodic; the others are the changes.
func TestEngineLossIsHeartbeatedAtOnce(t *testing.T) {
	nc := eventstest.Connect(t)
	tap := tapRelay(t, nc, testModel, resyncEndpoint)
	e := startFakeEngine(t, 100)
	cfg := relayConfig(e)
	cfg.HeartbeatInterval = time.Hour
	runRelay(t, nc, cfg)
	nextHeartbeat(t, tap, func(h api.Heartbeat) bool { return h.EngineConnected })
	_ = e.pub.Close() // the engine goes away
	nextHeartbeat(t, tap, func(h api.Heartbeat) bool { return !h.EngineConnected && !h.EngineUnknown })
}

// TestListenEngineBackBetweenProbes: in the listen topology an engine that
// dies and comes back between two health probes (so no probe ever failed)
// and then stays idle sends nothing that would prove it. The check made on
// the reconnect found its replay socket unanswering; the relay repeats it
// until the engine answers, then reports it connected and starts the
// stream over (the engine restarted).
func TestListenEngineBackBetweenProbes(t *testing.T) {
	for _, probe := range []bool{true, false} {
		t.Run(fmt.Sprintf("health probe %v", probe), func(t *testing.T) {
			nc := eventstest.Connect(t)
			tap := tapRelay(t, nc, testModel, resyncEndpoint)
			e := startFakeEngine(t, 100)
			addr := unusedAddr(t)
			dialPub := func() {
				e.mu.Lock()
				defer e.mu.Unlock()
				_ = e.pub.Close()
				// An engine's PUB (libzmq) connects in the background and
				// redials a listening relay forever; the context bounds that
				// to the test's length. What the relay forwards, not the
				// dial, is what the test checks.
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				e.pub = zmq4.NewPub(ctx, zmq4.WithDialerMaxRetries(-1))
				pub := e.pub
				dialed := make(chan struct{})
				go func() { defer close(dialed); _ = pub.Dial("tcp://" + addr) }()
				t.Cleanup(func() { cancel(); <-dialed; _ = pub.Close() })
			}
			cfg := relayConfig(e)
			cfg.EventsEndpoint, cfg.ListenEvents = "tcp://"+addr, true
			if probe {
				hs := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
				t.Cleanup(hs.Close)
				cfg.HealthURL = hs.URL + "/health"
			}
			runRelay(t, nc, cfg)
			dialPub()
			liveUntilForwarded(t, e, tap)
			nextHeartbeat(t, tap, func(h api.Heartbeat) bool { return h.EngineConnected })

			e.malformed.Store(true) // the engine is gone: its replay socket does not answer
			e.mu.Lock()
			_ = e.pub.Close() // its events connection drops
			e.mu.Unlock()
			nextHeartbeat(t, tap, func(h api.Heartbeat) bool { return !h.EngineConnected && !h.EngineUnknown })
			e.waitReplays(e.replays.Load() + 1) // the reconnect's check found no engine

			e.restart() // a new process, idle: it publishes nothing
			e.malformed.Store(false)
			dialPub()
			nextHeartbeat(t, tap, func(h api.Heartbeat) bool { return h.EngineConnected })
			var got []string
			for len(tap.events) > 0 {
				got = append(got, describe(<-tap.events))
			}
			if !slices.Contains(got, "reset reconnect 0") {
				t.Fatalf("the relay published %q after the engine came back, want a reset (the engine restarted)", got)
			}
		})
	}
}

// TestHealthTimeoutsTolerated: a health probe that only runs out of time is
// not proof the engine died (a loaded engine answers late); the engine stays
// connected until three probes in a row time out, while a refused or failed
// answer takes it down at once (TestHealthProbeGatesConnected).
func TestHealthTimeoutsTolerated(t *testing.T) {
	var slow atomic.Bool
	stop := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		if slow.Load() {
			select { // longer than the probe's timeout (one heartbeat interval)
			case <-time.After(2 * time.Second):
			case <-stop:
			}
		}
	}))
	t.Cleanup(hs.Close)
	t.Cleanup(func() { close(stop) })
	nc := eventstest.Connect(t)
	tap := tapRelay(t, nc, testModel, resyncEndpoint)
	e := startFakeEngine(t, 100)
	cfg := relayConfig(e)
	cfg.HealthURL = hs.URL + "/health"
	cfg.HeartbeatInterval = 200 * time.Millisecond
	rr := runRelay(t, nc, cfg)
	nextHeartbeat(t, tap, func(h api.Heartbeat) bool { return h.EngineConnected })
	slow.Store(true)
	failures := func() float64 {
		return eventstest.PlainCounter(t, rr.reg, "warmroute_events_relay_engine_health_failures_total")
	}
	sawLate := false
	testwait.Until(t, 10*time.Second, func() string {
		before := failures()
		up := eventstest.PlainGauge(t, rr.reg, "warmroute_events_relay_engine_connected")
		after := failures()
		if before >= 1 && after < 3 {
			sawLate = true
			if up != 1 {
				t.Fatalf("after %v timed-out probes the engine counts as disconnected, want connected until 3", after)
			}
		}
		if after < 3 {
			return fmt.Sprintf("%v timed-out probes", after)
		}
		return ""
	})
	if !sawLate {
		t.Log("no reading between the first and the third timeout (loaded machine)")
	}
	nextHeartbeat(t, tap, func(h api.Heartbeat) bool { return !h.EngineConnected && !h.EngineUnknown })
	slow.Store(false)
	nextHeartbeat(t, tap, func(h api.Heartbeat) bool { return h.EngineConnected })
}
