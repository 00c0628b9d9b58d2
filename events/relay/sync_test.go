package relay_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/events/eventstest"
	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/internal/testlog"
	"github.com/warmroute/warmroute/internal/testwait"
)

// chainPayload makes batch seq store block 1000+seq, child of 1000+seq-1,
// with tokens seq*4 .. seq*4+3: the batches form one chain.
func chainPayload(seq uint64) []byte {
	toks := []uint64{seq * 4, seq*4 + 1, seq*4 + 2, seq*4 + 3}
	var parent any
	if seq > 0 {
		parent = 1000 + seq - 1
	}
	b, err := msgpack.Marshal([]any{float64(time.Now().UnixMicro()) / 1e6, []any{map[string]any{"type": "BlockStored",
		"block_hashes": []uint64{1000 + seq}, "parent_block_hash": parent, "token_ids": toks, "block_size": 4}}, 0})
	if err != nil {
		panic(err)
	}
	return b
}

// router is a router's event side: an index fed by a subscriber.
type router struct {
	ix   *index.Index
	sub  *subscriber.Subscriber
	reg  *prometheus.Registry
	logs *testlog.Buffer // the subscriber's log, for failure messages
}

func startRouter(t *testing.T, nc *nats.Conn) *router {
	t.Helper()
	ix, err := index.New(index.Options{BlockSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	logs := new(testlog.Buffer)
	m, err := subscriber.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := subscriber.New(subscriber.Config{HeartbeatMembership: subscriber.AnyEndpoint, SyncChunkTimeout: 5 * time.Second},
		subscriber.Follow{Models: []string{testModel}}, nc, m, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Start(t.Context(), subscriber.NewIndexSink(ix, m), nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sub.Close)
	return &router{ix: ix, sub: sub, reg: reg, logs: logs}
}

// chainRun is how many leading blocks of the chain's first n blocks the
// index holds confirmed for the endpoint.
func (r *router) chainRun(n int) int {
	toks := make([]uint32, 4*n)
	for i := range toks {
		toks[i] = uint32(i)
	}
	keys, _ := index.AppendKeys(nil, index.Identity{Model: testModel}, 4, toks)
	return r.ix.Lookup(keys, []string{resyncEndpoint}, nil)[0].Confirmed
}

func (r *router) waitChain(t *testing.T, n int, why string) {
	t.Helper()
	testwait.Until(t, 20*time.Second, func() string {
		if got := r.chainRun(n); got != n {
			return fmt.Sprintf("%s: index holds %d of the chain's %d blocks", why, got, n)
		}
		return ""
	})
}

// syncsSeen lists every reason and result the router's sync counter has
// seen, with its count, for failure messages.
func (r *router) syncsSeen(t *testing.T) string {
	t.Helper()
	mfs, err := r.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, mf := range mfs {
		if mf.GetName() != "warmroute_events_subscriber_syncs_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, lp := range m.GetLabel() {
				labels = append(labels, lp.GetName()+"="+lp.GetValue())
			}
			seen = append(seen, fmt.Sprintf("{%s} %v", strings.Join(labels, ","), m.GetCounter().GetValue()))
		}
	}
	sort.Strings(seen)
	return strings.Join(seen, "; ")
}

func (r *router) syncs(t *testing.T, reason string) float64 {
	t.Helper()
	mfs, err := r.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, mf := range mfs {
		if mf.GetName() != "warmroute_events_subscriber_syncs_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			var gotReason, gotResult string
			for _, lp := range m.GetLabel() {
				switch lp.GetName() {
				case "reason":
					gotReason = lp.GetValue()
				case "result":
					gotResult = lp.GetValue()
				}
			}
			if gotReason == reason && gotResult == "ok" {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}

// publishLive sends n chained batches live, one at a time, until the relay
// has joined the engine's stream.
func publishLive(t *testing.T, e *fakeEngine, n int) {
	t.Helper()
	for range n {
		e.publish(1, true)
	}
}

// TestRouterRestartWithoutJetStreamKeepsTheIndex: a router started after
// the engine cached a chain (no JetStream, so no stream to replay) gets it
// from the relay's snapshot, and blocks continuing it chain (no unknown
// parent) instead of the whole index being lost.
func TestRouterRestartWithoutJetStreamKeepsTheIndex(t *testing.T) {
	nc := eventstest.Connect(t)
	e := startFakeEngine(t, 10000)
	e.payload = chainPayload
	runRelay(t, nc, relayConfig(e))
	first := startRouter(t, nc)
	testwait.Until(t, 20*time.Second, func() string {
		e.publish(1, true)
		if first.chainRun(1) == 0 {
			return "first router has not seen the chain's start"
		}
		return ""
	})
	publishLive(t, e, 20)
	e.mu.Lock()
	n := int(e.next)
	e.mu.Unlock()
	first.waitChain(t, n, "first router")
	first.sub.Close()

	second := startRouter(t, nc) // a restart: empty index, no stream to replay
	second.waitChain(t, n, "restarted router after its start sync")
	// The index holds a snapshot's blocks a moment before the sync is
	// counted (Commit, then the counter), so the count is waited for.
	testwait.Until(t, 10*time.Second, func() string {
		if got := second.syncs(t, "start"); got != 1 {
			return fmt.Sprintf("syncs{start,ok} = %v, want 1", got)
		}
		return ""
	})
	publishLive(t, e, 5)
	second.waitChain(t, n+5, "restarted router, live blocks continuing the chain")
	if up := second.ix.Stats().UnknownParent; up != 0 {
		t.Fatalf("unknown parents after the restart: %d, want 0", up)
	}
}

// outageNATS starts an embedded server a test can stop and restart on the
// same port; connect opens a client the test cleans up.
func outageNATS(t *testing.T) (ns *bus.EmbeddedServer, port int, connect func() *nats.Conn) {
	t.Helper()
	ns, err := bus.StartEmbeddedWith(bus.EmbeddedOptions{Host: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	url := ns.ClientURL()
	if _, err := fmt.Sscanf(url, "nats://127.0.0.1:%d", &port); err != nil {
		t.Fatalf("parsing %s: %v", url, err)
	}
	return ns, port, func() *nats.Conn {
		nc, err := bus.ConnectOptions{URL: url}.Connect()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
}

// TestNATSOutageLongerThanExpiryKeepsBlocks: NATS goes away for longer
// than the heartbeat expiry; the router, which cannot hear anyone, expires
// no one and keeps what it held, and when NATS returns the relay's snapshot
// (a reconnect sync) brings every block the engine holds, including those
// stored during the outage.
func TestNATSOutageLongerThanExpiryKeepsBlocks(t *testing.T) {
	ns, port, connect := outageNATS(t)
	e := startFakeEngine(t, 10000)
	e.payload = chainPayload
	runRelay(t, connect(), relayConfig(e))
	r := startRouter(t, connect())
	testwait.Until(t, 20*time.Second, func() string {
		e.publish(1, true)
		if r.chainRun(1) == 0 {
			return "router has not seen the chain's start"
		}
		return ""
	})
	publishLive(t, e, 10)

	held := r.chainRun(1)
	ns.Close()
	// The router cannot hear anyone, so it expires no one however long the
	// outage: the endpoint stays a candidate on what it held.
	time.Sleep(20 * 3 * 50 * time.Millisecond) // twenty silence limits (3 misses of 50 ms heartbeats)
	if reason, down := r.sub.Down(resyncEndpoint); down {
		t.Fatalf("endpoint down (%s) while the router could not hear it", reason)
	}
	if got := r.chainRun(1); got != held {
		t.Fatalf("index holds %d blocks of the chain during the outage, want the %d it held", got, held)
	}
	publishLive(t, e, 10) // cached while NATS is away: the relay's buffer may drop them, the mirror keeps them
	e.mu.Lock()
	n := int(e.next)
	e.mu.Unlock()

	ns2, err := bus.StartEmbeddedWith(bus.EmbeddedOptions{Host: "127.0.0.1", Port: port})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns2.Close)
	r.waitChain(t, n, "after NATS returned")
	if _, down := r.sub.Down(resyncEndpoint); down {
		t.Fatal("endpoint still down after its sync")
	}
	// A sync in flight when NATS went away holds the reconnect sync back
	// until it ends, which can take syncAttempts chunk timeouts (5 s here).
	// A loaded CI machine once outlasted a 20 s wait; the failure message
	// carries every sync result and the router's log to tell why.
	testwait.Until(t, 60*time.Second, func() string {
		// A reconnect sync, unless a gap or overflow sync came first and
		// covered it.
		if got := r.syncs(t, "reconnect") + r.syncs(t, "gap") + r.syncs(t, "overflow"); got < 1 {
			return fmt.Sprintf("syncs{reconnect|gap|overflow,ok} = %v, want at least 1 (all syncs: %s)\nrouter log:\n%s",
				got, r.syncsSeen(t), r.logs.String())
		}
		return ""
	})
}

// TestRelayEpochFollowsTheEngine: batches and heartbeats carry the
// mirror's epoch; an engine restart (its sequence starting over) starts a
// new one, named by the reset and everything after it.
func TestRelayEpochFollowsTheEngine(t *testing.T) {
	nc := eventstest.Connect(t)
	evSubj, _ := api.EventSubject(testModel, resyncEndpoint)
	hbSubj, _ := api.HeartbeatSubject(testModel, resyncEndpoint)
	events, err := nc.SubscribeSync(evSubj)
	if err != nil {
		t.Fatal(err)
	}
	beats, err := nc.SubscribeSync(hbSubj)
	if err != nil {
		t.Fatal(err)
	}
	e := startFakeEngine(t, 10000)
	cfg := relayConfig(e)
	cfg.ReplayEndpoint = "" // a restart then resets at once, without a replay
	runRelay(t, nc, cfg)
	var first *nats.Msg
	testwait.Until(t, 20*time.Second, func() string {
		e.publish(1, true)
		if m, err := events.NextMsg(100 * time.Millisecond); err == nil {
			first = m
			return ""
		}
		return "no batch from the relay yet"
	})
	e1 := first.Header.Get(api.EventEpochHeader)
	if e1 == "" || e1 == "0" {
		t.Fatalf("batch epoch header %q", e1)
	}
	heartbeatEpoch := func() string {
		t.Helper()
		m, err := beats.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var h api.Heartbeat
		if err := json.Unmarshal(m.Data, &h); err != nil {
			t.Fatal(err)
		}
		return strconv.FormatUint(h.Epoch, 10)
	}
	if got := heartbeatEpoch(); got != e1 {
		t.Fatalf("heartbeat epoch %s, batch epoch %s", got, e1)
	}
	e.restart()
	e.publish(1, true)
	var reset *nats.Msg
	testwait.Until(t, 20*time.Second, func() string {
		m, err := events.NextMsg(100 * time.Millisecond)
		if err == nil && m.Header.Get(api.EventKindHeader) == api.EventKindReset {
			reset = m
			return ""
		}
		return "no reset after the engine restarted"
	})
	e2 := reset.Header.Get(api.EventEpochHeader)
	if e2 == e1 || e2 == "" {
		t.Fatalf("reset epoch %q, before %q: want a new one", e2, e1)
	}
	testwait.Until(t, 10*time.Second, func() string {
		if got := heartbeatEpoch(); got != e2 {
			return fmt.Sprintf("heartbeat epoch %s, want %s", got, e2)
		}
		return ""
	})
}

// TestRelayOverflowDuringOutageKeepsBlocks: NATS goes away for less than
// the expiry but long enough for the relay's buffer to overflow; the relay
// then publishes an overflow reset, which without a mirror would clear the
// endpoint and leave a broken chain. The router syncs instead (the mirror
// took every batch) and holds the whole chain.
func TestRelayOverflowDuringOutageKeepsBlocks(t *testing.T) {
	ns, port, connect := outageNATS(t)
	e := startFakeEngine(t, 10000)
	e.payload = chainPayload
	cfg := relayConfig(e)
	cfg.BufferSize, cfg.HeartbeatInterval = 2, 2*time.Second // expiry after 6 s: longer than the outage
	rel := runRelay(t, connect(), cfg)
	r := startRouter(t, connect())
	testwait.Until(t, 20*time.Second, func() string {
		e.publish(1, true)
		if r.chainRun(1) == 0 {
			return "router has not seen the chain's start"
		}
		return ""
	})
	ns.Close()
	publishLive(t, e, 10) // the relay's buffer keeps 2 of them
	e.mu.Lock()
	n := int(e.next)
	e.mu.Unlock()
	testwait.Until(t, 20*time.Second, func() string {
		if eventstest.PlainCounter(t, rel.reg, "warmroute_events_relay_buffer_dropped_total") == 0 {
			return "the relay's buffer has not overflowed"
		}
		return ""
	})
	ns2, err := bus.StartEmbeddedWith(bus.EmbeddedOptions{Host: "127.0.0.1", Port: port})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns2.Close)
	r.waitChain(t, n, "after the overflow reset")
	// Counted just after the snapshot's blocks are in the index; a gap
	// sync may come first and cover the others.
	testwait.Until(t, 10*time.Second, func() string {
		if got := r.syncs(t, "overflow") + r.syncs(t, "reconnect") + r.syncs(t, "gap"); got < 1 {
			return fmt.Sprintf("syncs{overflow|reconnect|gap,ok} = %v, want at least 1", got)
		}
		return ""
	})
}
