package relay_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/eventstest"
	"github.com/warmroute/warmroute/events/relay"
	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/internal/testwait"
)

const (
	testModel    = eventstest.Model
	testStream   = "KVTEST"
	sinkEndpoint = "10.9.0.1:8000"
)

const resyncEndpoint = "10.0.0.1:8000"

// runningRelay is a relay under Run; stop cancels it and waits.
type runningRelay struct {
	reg  *prometheus.Registry
	stop func()
}

func runRelay(t *testing.T, nc *nats.Conn, cfg relay.Config) *runningRelay {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := relay.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := relay.New(cfg, nc, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &runningRelay{reg: reg, stop: eventstest.Run(t, "relay", r.Run)}
}

func relayConfig(e *fakeEngine) relay.Config {
	return relay.Config{EventsEndpoint: e.eventsURL(), ReplayEndpoint: e.replayURL(), Model: testModel,
		Endpoint: resyncEndpoint, HeartbeatInterval: 50 * time.Millisecond}
}

// describe renders what the relay published, one line per message:
// "b3" for batch 3, "b0 start" for a stream-start batch, "reset gap 5".
func describe(m *nats.Msg) string {
	seq := m.Header.Get(api.EventSeqHeader)
	if m.Header.Get(api.EventKindHeader) == api.EventKindReset {
		return "reset " + m.Header.Get(api.EventResetReasonHeader) + " " + seq
	}
	if m.Header.Get(api.EventStreamStartHeader) == "true" {
		return "b" + seq + " start"
	}
	return "b" + seq
}

func batches(from, to uint64) []string {
	var out []string
	for s := from; s <= to; s++ {
		d := "b" + strconv.FormatUint(s, 10)
		if s == 0 {
			d += " start"
		}
		out = append(out, d)
	}
	return out
}

// liveUntilForwarded publishes live batches one at a time until the relay
// has forwarded the newest, and returns every message the relay published
// meanwhile, described, plus the newest seq. ZMQ's slow joiner may lose the
// first live batches; the relay fills them from the replay buffer once a
// later one arrives, so the result does not depend on it.
func liveUntilForwarded(t *testing.T, e *fakeEngine, tap *natsTap) ([]string, uint64) {
	t.Helper()
	var got []string
	var newest uint64
	testwait.Until(t, 10*time.Second, func() string {
		e.publish(1, true)
		e.mu.Lock()
		newest = e.next - 1
		e.mu.Unlock()
		wait := time.After(200 * time.Millisecond)
		for {
			select {
			case m := <-tap.events:
				if m.Header.Get(api.EventKindHeader) == api.EventKindBatch {
					checkPayload(t, m, mustSeq(t, m))
				}
				got = append(got, describe(m))
				if got[len(got)-1] == "b"+strconv.FormatUint(newest, 10) {
					return ""
				}
			case <-wait:
				return fmt.Sprintf("relay did not forward the newest live batch; published %q", got)
			}
		}
	})
	return got, newest
}

func mustSeq(t *testing.T, m *nats.Msg) uint64 {
	t.Helper()
	seq, err := strconv.ParseUint(m.Header.Get(api.EventSeqHeader), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

// resyncs reads relay_resyncs_total for outcome.
func resyncs(t *testing.T, reg *prometheus.Registry, outcome string) float64 {
	t.Helper()
	return eventstest.CounterValue(t, reg, "warmroute_events_relay_resyncs_total", "outcome", outcome)
}

// A starting relay republishes the engine's replay buffer, then continues
// live with neither gaps nor duplicates.
func TestRelayResyncAtStart(t *testing.T) {
	tests := []struct {
		name     string
		keep     int // engine's buffer_steps
		prefill  int // batches published before the relay starts (not live)
		during   int // batches published while the replay request is served
		noReplay bool
		want     []string // published before the live batches
		liveFrom int      // first live seq; -1: whatever arrives first
		outcome  string
	}{
		{"buffer reaches seq 0", 100, 5, 0, false, batches(0, 4), 5, "complete"},
		{"batches published during the replay are not repeated", 100, 3, 2, false, batches(0, 4), 5, "complete"},
		{"buffer starts after seq 0", 3, 8, 0, false, append([]string{"reset gap 5"}, "b5", "b6", "b7"), 8, "partial"},
		{"empty buffer: stream starts at seq 0", 100, 0, 0, false, nil, 0, "empty"},
		{"replay socket unreachable", 100, 3, 0, true, nil, -1, "failed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nc := eventstest.Connect(t)
			tap := tapRelay(t, nc, testModel, resyncEndpoint)
			e := startFakeEngine(t, tc.keep)
			e.publish(tc.prefill, false)
			if tc.during > 0 {
				e.beforeReply = func() { e.publish(tc.during, true) }
			}
			cfg := relayConfig(e)
			if tc.noReplay {
				cfg.ReplayEndpoint = "tcp://127.0.0.1:1"
			}
			r := runRelay(t, nc, cfg)
			if !tc.noReplay {
				e.waitReplays(1)
			}
			got, newest := liveUntilForwarded(t, e, tap)
			liveFrom := uint64(tc.liveFrom)
			if tc.liveFrom < 0 {
				// Without a replay the stream starts at the first live batch
				// that arrives, unmarked (slow joiner: not always the first
				// one sent).
				liveFrom, _ = strconv.ParseUint(got[0][1:], 10, 64)
				if liveFrom < uint64(tc.prefill) {
					t.Fatalf("relay published %q, batches the engine never sent live", got)
				}
			}
			want := append(slices.Clone(tc.want), batches(liveFrom, newest)...)
			if !slices.Equal(got, want) {
				t.Fatalf("relay published\n%q\nwant\n%q", got, want)
			}
			waitResyncs(t, r.reg, tc.outcome, 1)
		})
	}
}

// An engine restart seen live (its sequence went backwards) republishes the
// new engine's buffer from seq 0 after a restart reset, instead of
// forgetting the batches the relay did not see live.
func TestRelayResyncAfterEngineRestart(t *testing.T) {
	nc := eventstest.Connect(t)
	tap := tapRelay(t, nc, testModel, resyncEndpoint)
	e := startFakeEngine(t, 100)
	e.publish(6, false)
	r := runRelay(t, nc, relayConfig(e))
	e.waitReplays(1)
	if got, _ := liveUntilForwarded(t, e, tap); !slices.Equal(got[:6], batches(0, 5)) {
		t.Fatalf("before the restart the relay published %q", got)
	}
	e.restart()
	e.publish(2, false) // seqs 0 and 1 reach only the replay buffer
	got, newest := liveUntilForwarded(t, e, tap)
	want := append([]string{"reset restart 0"}, batches(0, newest)...)
	if !slices.Equal(got, want) {
		t.Fatalf("after the engine restart the relay published\n%q\nwant\n%q", got, want)
	}
	waitResyncs(t, r.reg, "complete", 2)
}

// After the engine's socket drops, the relay checks the engine behind the new
// connection against the last batch it forwarded: the same engine continues
// without a reset; a restarted one that stays idle is reset at once, rather
// than left looking warm until it happens to publish again.
func TestRelayReconnectChecksEngine(t *testing.T) {
	for _, restarted := range []bool{false, true} {
		t.Run(fmt.Sprintf("restarted=%v", restarted), func(t *testing.T) {
			nc := eventstest.Connect(t)
			tap := tapRelay(t, nc, testModel, resyncEndpoint)
			e := startFakeEngine(t, 100)
			runRelay(t, nc, relayConfig(e))
			e.waitReplays(1)
			_, newest := liveUntilForwarded(t, e, tap)
			if restarted {
				e.restart()
			}
			e.dropConnections()
			if restarted {
				m := tap.next()
				if got := describe(m); got != "reset reconnect 0" {
					t.Fatalf("after reconnecting to a restarted idle engine the relay published %q, want the reset", got)
				}
				return
			}
			got, _ := liveUntilForwarded(t, e, tap)
			if len(got) == 0 || got[0] != "b"+strconv.FormatUint(newest+1, 10) {
				t.Fatalf("after reconnecting to the same engine the relay published %q, want b%d onwards and no reset", got, newest+1)
			}
		})
	}
}

// waitResyncs waits for the resync counter to reach want: it moves when a
// resync ends, which can trail the last batch the resync forwarded.
func waitResyncs(t *testing.T, reg *prometheus.Registry, outcome string, want float64) {
	t.Helper()
	testwait.Until(t, 5*time.Second, func() string {
		if n := resyncs(t, reg, outcome); n != want {
			return fmt.Sprintf("relay_resyncs_total{outcome=%q} = %v, want %v", outcome, n, want)
		}
		return ""
	})
}

// The router's view after a relay restart equals the engine's cached blocks
// again without new engine traffic, whether the old relay left cleanly or
// vanished (its stale stream is superseded by the stream-start batch, even
// when the new relay reuses the old relay's id).
func TestRouterRegainsBlocksAfterRelayRestart(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, nc *nats.Conn, e *fakeEngine, sink *eventstest.Sink) string // returns the new relay's id
	}{
		{"clean stop, leaving heartbeat", func(t *testing.T, nc *nats.Conn, e *fakeEngine, sink *eventstest.Sink) string {
			old := runRelay(t, nc, relayConfig(e))
			e.waitReplays(1)
			waitBlocks(t, sink, engineBlocks(4))
			old.stop()
			waitBlocks(t, sink, nil)
			return ""
		}},
		{"crash, same relay id", func(t *testing.T, nc *nats.Conn, e *fakeEngine, sink *eventstest.Sink) string {
			for seq := range uint64(10) { // what a vanished relay (id r1) had published
				eventstest.PublishTo(t, nc, resyncEndpoint, seq, false, eventstest.StoredPayload(900+seq, 0, 0, 1))
			}
			waitBlocks(t, sink, []uint64{900, 901, 902, 903, 904, 905, 906, 907, 908, 909})
			return "r1"
		}},
		{"crash, new relay id", func(t *testing.T, nc *nats.Conn, e *fakeEngine, sink *eventstest.Sink) string {
			for seq := range uint64(10) {
				eventstest.PublishTo(t, nc, resyncEndpoint, seq, false, eventstest.StoredPayload(900+seq, 0, 0, 1))
			}
			waitBlocks(t, sink, []uint64{900, 901, 902, 903, 904, 905, 906, 907, 908, 909})
			return ""
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nc := eventstest.Connect(t)
			sink := &eventstest.Sink{}
			eventstest.StartSubscriber(t, nc, subscriber.Config{HeartbeatMembership: subscriber.AnyEndpoint},
				subscriber.Follow{Models: []string{testModel}}, nil, sink, nil)
			e := startFakeEngine(t, 100)
			e.publish(4, false)
			cfg := relayConfig(e)
			cfg.RelayID = tc.setup(t, nc, e, sink)
			runRelay(t, nc, cfg)
			waitBlocks(t, sink, engineBlocks(4))
		})
	}
}

// engineBlocks is the fake engine's block set after n batches.
func engineBlocks(n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = 1000 + uint64(i)
	}
	return out
}

func waitBlocks(t *testing.T, sink *eventstest.Sink, want []uint64) {
	t.Helper()
	src := subscriber.Source{Model: testModel, Endpoint: resyncEndpoint}
	testwait.Until(t, 10*time.Second, testwait.That(fmt.Sprintf("router holds %v", want), func() bool {
		got := sink.Blocks(src)
		return slices.Equal(got, want) || (len(want) == 0 && len(got) == 0)
	}))
}

// A malformed replay reply fails the resync cleanly: it is counted, nothing
// is republished, and the relay follows the live stream as before.
func TestRelayResyncMalformedReply(t *testing.T) {
	nc := eventstest.Connect(t)
	tap := tapRelay(t, nc, testModel, resyncEndpoint)
	e := startFakeEngine(t, 100)
	e.malformed.Store(true)
	e.publish(3, false)
	r := runRelay(t, nc, relayConfig(e))
	e.waitReplays(1)
	testwait.Until(t, 10*time.Second, testwait.That("failed resync counted", func() bool { return resyncs(t, r.reg, "failed") == 1 }))
	got, newest := liveUntilForwarded(t, e, tap)
	// The first live batch seen starts the stream; a later gap would ask
	// the (still malformed) replay socket again and end in a reset.
	if first, err := strconv.ParseUint(strings.TrimPrefix(got[0], "b"), 10, 64); err != nil || first < 3 {
		t.Fatalf("relay published %q first, want the first live batch", got[0])
	}
	if got[len(got)-1] != "b"+strconv.FormatUint(newest, 10) {
		t.Fatalf("relay published %q", got)
	}
}

// TestRelayUsesThePayloadsDPRank: an engine whose batches name data-parallel
// rank 1, behind a relay left at --dp-rank 0, is published under rank 1 (so
// two ranks' relays do not share one stream), and the disagreement counts.
func TestRelayUsesThePayloadsDPRank(t *testing.T) {
	nc := eventstest.Connect(t)
	tap := tapRelay(t, nc, testModel, resyncEndpoint)
	e := startFakeEngine(t, 100)
	e.dpRank = 1
	rr := runRelay(t, nc, relayConfig(e))
	e.waitReplays(1)
	liveUntilForwarded(t, e, tap) // live batches until one reached NATS (a PUB drops what it sends before the SUB joins)
	e.publish(1, true)
	var last *nats.Msg
	testwait.Until(t, 10*time.Second, func() string {
		select {
		case m := <-tap.events:
			if m.Header.Get(api.EventKindHeader) == api.EventKindBatch {
				last = m
				return ""
			}
			return "no batch after the live ones yet"
		default:
			if last == nil {
				e.publish(1, true)
			}
			return "no batch published yet"
		}
	})
	if got := last.Header.Get(api.EventDPRankHeader); got != "1" {
		t.Fatalf("batch published under dp rank %q, want the payload's 1", got)
	}
	if n := eventstest.PlainCounter(t, rr.reg, "warmroute_events_relay_dp_rank_mismatch_total"); n != 1 {
		t.Fatalf("dp rank mismatches counted %v, want 1 (counted once, not per batch)", n)
	}
	testwait.Until(t, 10*time.Second, testwait.That("a heartbeat under rank 1", func() bool {
		for {
			select {
			case m := <-tap.beats:
				var hb api.Heartbeat
				if json.Unmarshal(m.Data, &hb) == nil && hb.DPRank == 1 {
					return true
				}
			default:
				return false
			}
		}
	}))
}

// TestRelayRestartRightAfterResync: the engine restarts while the relay's
// start-up resync window is still open. Its new batches carry old sequence
// numbers but other bytes, so they start the stream over (reset restart, then
// the new engine's batches) instead of being dropped as duplicates of the
// replay, which left the old chain indexed.
func TestRelayRestartRightAfterResync(t *testing.T) {
	nc := eventstest.Connect(t)
	tap := tapRelay(t, nc, testModel, resyncEndpoint)
	e := startFakeEngine(t, 100)
	e.publish(6, false)
	runRelay(t, nc, relayConfig(e))
	e.waitReplays(1)
	var replayed []string
	for len(replayed) < 6 {
		replayed = append(replayed, describe(tap.next()))
	}
	if want := append([]string{"b0 start"}, batches(1, 5)...); !slices.Equal(replayed, want) {
		t.Fatalf("start-up resync published %q, want %q", replayed, want)
	}
	e.restart()
	got, newest := liveUntilForwarded(t, e, tap)
	want := append([]string{"reset restart 0"}, batches(0, newest)...)
	if !slices.Equal(got, want) {
		t.Fatalf("after a restart inside the resync window the relay published\n%q\nwant\n%q", got, want)
	}
}
