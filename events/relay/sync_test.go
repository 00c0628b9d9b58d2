package relay_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/events/eventstest"
	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/index"
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
	ix  *index.Index
	sub *subscriber.Subscriber
	reg *prometheus.Registry
}

func startRouter(t *testing.T, nc *nats.Conn) *router {
	t.Helper()
	ix, err := index.New(index.Options{BlockSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	m, err := subscriber.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := subscriber.New(subscriber.Config{HeartbeatMembership: subscriber.AnyEndpoint, SyncChunkTimeout: 5 * time.Second},
		subscriber.Follow{Models: []string{testModel}}, nc, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Start(t.Context(), subscriber.NewIndexSink(ix, m), nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sub.Close)
	return &router{ix: ix, sub: sub, reg: reg}
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
	if got := second.syncs(t, "start"); got != 1 {
		t.Fatalf("syncs{start,ok} = %v, want 1", got)
	}
	publishLive(t, e, 5)
	second.waitChain(t, n+5, "restarted router, live blocks continuing the chain")
	if up := second.ix.Stats().UnknownParent; up != 0 {
		t.Fatalf("unknown parents after the restart: %d, want 0", up)
	}
}

// TestNATSOutageLongerThanExpiryKeepsBlocks: NATS goes away for longer
// than the heartbeat expiry, the router expires the endpoint (clearing its
// blocks, and keeping it out of routing), and when NATS returns the relay's
// snapshot restores every block the engine still holds, including those
// stored during the outage; the endpoint routes again only after that.
func TestNATSOutageLongerThanExpiryKeepsBlocks(t *testing.T) {
	ns, err := bus.StartEmbeddedWith(bus.EmbeddedOptions{Host: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	url := ns.ClientURL()
	var port int
	if _, err := fmt.Sscanf(url, "nats://127.0.0.1:%d", &port); err != nil {
		t.Fatalf("parsing %s: %v", url, err)
	}
	connect := func() *nats.Conn {
		nc, err := bus.ConnectOptions{URL: url}.Connect()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
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

	ns.Close()
	testwait.Until(t, 20*time.Second, func() string {
		if reason, down := r.sub.Down(resyncEndpoint); !down || reason != subscriber.DownExpired {
			return fmt.Sprintf("endpoint down=%v (%q), want expired", down, reason)
		}
		return ""
	})
	if got := r.chainRun(1); got != 0 {
		t.Fatalf("expired endpoint still holds %d blocks", got)
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
	if got := r.syncs(t, "expired") + r.syncs(t, "reconnect"); got < 1 {
		t.Fatalf("syncs{expired|reconnect,ok} = %v, want at least 1", got)
	}
}
