package subscriber_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/eventstest"
	"github.com/warmroute/warmroute/events/snapshot"
	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/internal/testwait"
)

const syncEP = "10.7.0.1:8000"

// snapRelay plays a relay with a mirror: heartbeats and batches carry its
// epoch, and snapshot requests wait in requests for the test to answer.
type snapRelay struct {
	t        *testing.T
	nc       *nats.Conn
	epoch    uint64
	requests chan *nats.Msg
}

func newSnapRelay(t *testing.T, nc *nats.Conn, epoch uint64, serve bool) *snapRelay {
	t.Helper()
	r := &snapRelay{t: t, nc: nc, epoch: epoch, requests: make(chan *nats.Msg, 16)}
	if serve {
		subj, _ := api.SnapshotWildcard(testModel, syncEP)
		sub, err := nc.Subscribe(subj, func(m *nats.Msg) { r.requests <- m })
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sub.Unsubscribe() })
	}
	return r
}

func (r *snapRelay) beat(interval time.Duration) {
	r.t.Helper()
	subj, _ := api.HeartbeatSubject(testModel, syncEP)
	body, _ := json.Marshal(api.Heartbeat{Endpoint: syncEP, Model: testModel, Relay: "snap", EngineConnected: true,
		Interval: api.Duration(interval), SentAt: time.Now(), Epoch: r.epoch})
	if err := r.nc.Publish(subj, body); err != nil {
		r.t.Fatal(err)
	}
}

func (r *snapRelay) publish(seq uint64, data []byte) {
	r.t.Helper()
	subj, _ := api.EventSubject(testModel, syncEP)
	h := nats.Header{api.EventKindHeader: {api.EventKindBatch}, api.EventSeqHeader: {strconv.FormatUint(seq, 10)},
		api.EventDPRankHeader: {"0"}, api.EventRelayHeader: {"snap"}, api.EventEndpointHeader: {syncEP},
		api.EventEpochHeader: {strconv.FormatUint(r.epoch, 10)}}
	if err := r.nc.PublishMsg(&nats.Msg{Subject: subj, Header: h, Data: data}); err != nil {
		r.t.Fatal(err)
	}
}

func (r *snapRelay) request() *nats.Msg {
	r.t.Helper()
	select {
	case m := <-r.requests:
		return m
	case <-time.After(20 * time.Second):
		r.t.Fatal("no snapshot request arrived")
		return nil
	}
}

// answer sends blocks as a snapshot at seq, perChunk blocks a chunk; only
// the first `send` chunks go out (fewer than all: the relay died).
func (r *snapRelay) answer(m *nats.Msg, seq uint64, blocks []snapshot.Block, perChunk, send int) {
	r.t.Helper()
	var chunks [][]byte
	for i := 0; i == 0 || i*perChunk < len(blocks); i++ {
		part := blocks[i*perChunk : min(len(blocks), (i+1)*perChunk)]
		h := snapshot.Header{Epoch: r.epoch, Seq: seq, HasSeq: true, Index: uint32(i),
			Last: (i+1)*perChunk >= len(blocks), Media: []string{""}, LoRAs: []string{""}}
		c := snapshot.AppendHeader(nil, &h, len(part))
		for j := range part {
			c = snapshot.AppendBlock(c, &part[j])
		}
		chunks = append(chunks, c)
	}
	if err := snapshot.Reply(r.nc, m.Reply, chunks[:min(send, len(chunks))]); err != nil {
		r.t.Fatal(err)
	}
}

// chain is blocks [0, n) of the test chain: hash i+1, tokens 16i .. 16i+15.
func chain(n int) []snapshot.Block {
	out := make([]snapshot.Block, n)
	for i := range out {
		toks := make([]uint32, 16)
		for j := range toks {
			toks[j] = uint32(16*i + j)
		}
		out[i] = snapshot.Block{Hash: uint64(i + 1), Media: 1, Tokens: toks}
		if i > 0 {
			out[i].Parent, out[i].HasParent = uint64(i), true
		}
	}
	return out
}

type syncRouter struct {
	ix  *index.Index
	sub *subscriber.Subscriber
	reg *prometheus.Registry
}

func startSyncRouter(t *testing.T, nc *nats.Conn, chunkTimeout time.Duration) *syncRouter {
	t.Helper()
	ix, m, reg := indexWithMetrics(t, index.Options{BlockSize: 16})
	cfg := discovering
	cfg.SyncChunkTimeout = chunkTimeout
	sub := eventstest.StartSubscriber(t, nc, cfg, subscriber.Follow{Models: []string{testModel}}, m,
		subscriber.NewIndexSink(ix, m), nil)
	return &syncRouter{ix: ix, sub: sub, reg: reg}
}

// run is how many leading blocks of the test chain's first n the index
// holds confirmed.
func (r *syncRouter) run(n int) int {
	toks := make([]uint32, 16*n)
	for i := range toks {
		toks[i] = uint32(i)
	}
	keys, _ := index.AppendKeys(nil, index.Identity{Model: testModel}, 16, toks)
	return r.ix.Lookup(keys, []string{syncEP}, nil)[0].Confirmed
}

func (r *syncRouter) waitRun(t *testing.T, n, want int) {
	t.Helper()
	testwait.Until(t, 20*time.Second, func() string {
		if got := r.run(n); got != want {
			return fmt.Sprintf("index holds %d leading blocks of the chain's first %d, want %d", got, n, want)
		}
		return ""
	})
}

func (r *syncRouter) syncs(t *testing.T, reason, result string) float64 {
	t.Helper()
	return r.counter(t, "warmroute_events_subscriber_syncs_total", map[string]string{"reason": reason, "result": result})
}

// counter is the value of the named counter whose labels include want.
func (r *syncRouter) counter(t *testing.T, name string, want map[string]string) float64 {
	t.Helper()
	mfs, err := r.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, lp := range m.GetLabel() {
				got[lp.GetName()] = lp.GetValue()
			}
			for k, v := range want {
				if got[k] != v {
					continue metrics
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

func (r *syncRouter) waitSyncs(t *testing.T, reason, result string, want float64) {
	t.Helper()
	testwait.Until(t, 20*time.Second, func() string {
		if got := r.syncs(t, reason, result); got != want {
			return fmt.Sprintf("syncs{%s,%s} = %v, want %v", reason, result, got, want)
		}
		return ""
	})
}

// waitHandled waits until the subscriber has handled a heartbeat sent now,
// and so every message the relay published before it.
func (r *syncRouter) waitHandled(t *testing.T, relay *snapRelay) {
	t.Helper()
	src := subscriber.Source{Model: testModel, Endpoint: syncEP}
	before, _ := r.sub.SourceFreshness(src)
	time.Sleep(time.Millisecond) // a later heartbeat time to wait for, not an assertion
	relay.beat(time.Second)
	testwait.Until(t, 10*time.Second, func() string {
		if f, _ := r.sub.SourceFreshness(src); !f.LastHeartbeat.After(before.LastHeartbeat) {
			return "heartbeat not handled yet"
		}
		return ""
	})
}

// TestSyncBuffersLiveBatches: live batches that arrive while the snapshot
// is fetched wait; after it, those at or below its sequence are dropped
// (a removal already in the snapshot is not applied again) and later ones
// continue the snapshot's chain.
func TestSyncBuffersLiveBatches(t *testing.T) {
	nc := eventstest.Connect(t)
	relay := newSnapRelay(t, nc, 77, true)
	r := startSyncRouter(t, nc, 5*time.Second)
	relay.beat(time.Second)
	req := relay.request()
	relay.publish(9, batchPayload("BlockRemoved", 2)) // seq 9 is in the snapshot (taken at 10)
	relay.publish(11, eventstest.StoredPayload(5, 4, 64, 1))
	r.waitHandled(t, relay)
	if got := r.run(5); got != 0 {
		t.Fatalf("%d blocks applied before the snapshot", got)
	}
	relay.answer(req, 10, chain(4), 3, 2)
	r.waitRun(t, 5, 5)
	if got := r.syncs(t, "start", "ok"); got != 1 {
		t.Fatalf("syncs{start,ok} = %v, want 1", got)
	}
	if up := r.ix.Stats().UnknownParent; up != 0 {
		t.Fatalf("unknown parents %d, want 0", up)
	}
	relay.publish(12, batchPayload("BlockRemoved", 3))
	r.waitRun(t, 5, 2)
}

// TestSyncRetriesARelayThatDiedMidSnapshot: a snapshot cut off after its
// first chunk times out and is asked again; the complete second answer is
// applied.
func TestSyncRetriesARelayThatDiedMidSnapshot(t *testing.T) {
	nc := eventstest.Connect(t)
	relay := newSnapRelay(t, nc, 5, true)
	r := startSyncRouter(t, nc, 300*time.Millisecond)
	relay.beat(10 * time.Second)
	relay.answer(relay.request(), 3, chain(6), 2, 1) // one chunk of three, then silence
	relay.answer(relay.request(), 3, chain(6), 2, 3)
	r.waitRun(t, 6, 6)
	r.waitSyncs(t, "start", "ok", 1)
}

// TestSyncFailureFallsBackToTheLiveStream: a relay that never completes a
// snapshot costs three attempts, counted as a timeout; the endpoint then
// follows its live stream (the batches held meanwhile are applied) and is
// a candidate.
func TestSyncFailureFallsBackToTheLiveStream(t *testing.T) {
	nc := eventstest.Connect(t)
	relay := newSnapRelay(t, nc, 5, true)
	r := startSyncRouter(t, nc, 200*time.Millisecond)
	relay.beat(10 * time.Second)
	relay.publish(0, eventstest.StoredPayload(1, 0, 0, 2))
	for range 3 {
		relay.request() // never answered
	}
	r.waitSyncs(t, "start", "timeout", 1)
	r.waitRun(t, 2, 2)
	if _, down := r.sub.Down(syncEP); down || r.sub.Syncing(syncEP) {
		t.Fatal("endpoint still excluded or syncing after the failed sync")
	}
}

// TestNoRespondersFallsBack: a heartbeat with an epoch but no relay
// answering the snapshot subject is counted no_responders, once.
func TestNoRespondersFallsBack(t *testing.T) {
	nc := eventstest.Connect(t)
	relay := newSnapRelay(t, nc, 5, false)
	r := startSyncRouter(t, nc, time.Second)
	relay.beat(10 * time.Second)
	r.waitSyncs(t, "start", "no_responders", 1)
	relay.beat(10 * time.Second)
	relay.publish(0, eventstest.StoredPayload(1, 0, 0, 1))
	r.waitRun(t, 1, 1)
	if got := r.syncs(t, "start", "no_responders"); got != 1 {
		t.Fatalf("syncs{start,no_responders} = %v, want 1 (no retry per heartbeat)", got)
	}
}

// TestReturningEndpointIsACandidateOnlyWhenSynced: an endpoint whose
// relay expired is down; heard again it is syncing and still excluded
// until the snapshot is applied, then live with its blocks; an epoch change
// seen in a heartbeat syncs again.
func TestReturningEndpointIsACandidateOnlyWhenSynced(t *testing.T) {
	nc := eventstest.Connect(t)
	relay := newSnapRelay(t, nc, 5, true)
	r := startSyncRouter(t, nc, 5*time.Second)
	relay.beat(50 * time.Millisecond)
	relay.answer(relay.request(), 1, chain(3), 10, 1)
	r.waitRun(t, 3, 3)
	testwait.Until(t, 20*time.Second, func() string {
		if reason, down := r.sub.Down(syncEP); !down || reason != subscriber.DownExpired {
			return fmt.Sprintf("down=%v (%q), want expired", down, reason)
		}
		return ""
	})
	if got := r.run(3); got != 0 {
		t.Fatalf("expired endpoint holds %d blocks", got)
	}
	relay.beat(10 * time.Second)
	req := relay.request()
	if reason, down := r.sub.Down(syncEP); !down || reason != subscriber.DownSyncing || !r.sub.Syncing(syncEP) {
		t.Fatalf("returning endpoint: down=%v (%q), syncing=%v; want excluded as syncing", down, reason, r.sub.Syncing(syncEP))
	}
	relay.answer(req, 2, chain(4), 10, 1)
	r.waitRun(t, 4, 4)
	if _, down := r.sub.Down(syncEP); down {
		t.Fatal("synced endpoint still down")
	}
	r.waitSyncs(t, "expired", "ok", 1)

	relay.epoch = 6 // the relay restarted its mirror; the reset that said so was lost
	relay.beat(10 * time.Second)
	relay.answer(relay.request(), 0, chain(1), 10, 1)
	r.waitRun(t, 4, 1)
	r.waitSyncs(t, "epoch", "ok", 1)
	if _, down := r.sub.Down(syncEP); down {
		t.Fatal("endpoint syncing after an epoch change was excluded")
	}
}

// startSyncedRouter starts a router following a relay of epoch 5 and
// returns both once the router has synced the relay's 3-block chain at seq
// 10.
func startSyncedRouter(t *testing.T) (*snapRelay, *syncRouter) {
	t.Helper()
	nc := eventstest.Connect(t)
	relay := newSnapRelay(t, nc, 5, true)
	r := startSyncRouter(t, nc, 5*time.Second)
	relay.beat(10 * time.Second)
	relay.answer(relay.request(), 10, chain(3), 10, 1)
	r.waitRun(t, 3, 3)
	return relay, r
}

// TestEpochChangeOnABatchSyncs: a batch of another epoch whose sequence
// looks like a duplicate (a restarted relay and engine, its reset lost) is
// not dropped: the router syncs, and the new state replaces the old.
func TestEpochChangeOnABatchSyncs(t *testing.T) {
	relay, r := startSyncedRouter(t)
	relay.epoch = 6
	relay.publish(2, eventstest.StoredPayload(1, 0, 0, 1)) // seq 2 < 11: a duplicate by sequence alone
	relay.answer(relay.request(), 2, chain(1), 10, 1)
	r.waitRun(t, 3, 1)
	r.waitSyncs(t, "epoch", "ok", 1)
}

// TestStaleEpochHeldThroughSyncsEnds: a batch of an epoch the relay has
// already left (a relay restarted, then its engine reset, before the
// router's sync was answered) makes the router sync; the snapshot names the
// newer epoch. The held batch is asked about once more (the relay might
// have moved on while answering) and then dropped as stale, instead of
// asking the relay for a snapshot again and again: it once did so every
// few milliseconds until the process ended.
func TestStaleEpochHeldThroughSyncsEnds(t *testing.T) {
	relay, r := startSyncedRouter(t)
	relay.epoch = 6
	relay.publish(11, eventstest.StoredPayload(1, 0, 0, 1))
	req := relay.request()
	relay.epoch = 7 // the relay moved on before it answered
	relay.answer(req, 4, chain(2), 10, 1)
	relay.answer(relay.request(), 4, chain(2), 10, 1) // the one more question
	r.waitRun(t, 3, 2)
	r.waitSyncs(t, "epoch", "ok", 2)
	testwait.Until(t, 10*time.Second, func() string {
		if got := r.counter(t, "warmroute_events_subscriber_messages_total", map[string]string{"result": "stale_epoch"}); got != 1 {
			return fmt.Sprintf("messages{stale_epoch} = %v, want 1", got)
		}
		return ""
	})
	r.waitHandled(t, relay) // a heartbeat of epoch 7 asks nothing either
	select {
	case <-relay.requests:
		t.Fatal("the router asked for a snapshot again for a batch of an epoch the relay has left")
	case <-time.After(300 * time.Millisecond): // a livelocked router asks within milliseconds
	}
	relay.publish(5, batchPayload("BlockRemoved", 2)) // the current epoch continues the snapshot
	r.waitRun(t, 3, 1)
}
