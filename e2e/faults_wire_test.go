package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/warmroute/warmroute/api"
)

func init() {
	faultCases = append(faultCases,
		faultCase{"last batch dropped on the bus", lastBatchDropped},
		faultCase{"sequence restart straight after a resync", seqRestartAfterResync},
		faultCase{"report-mode-full re-announcements", reannouncements},
		faultCase{"two DP ranks, one engine killed and restarted", twoDPRanks},
	)
}

// lastBatchDropped loses the engine's last batch between relay and router
// (nothing follows it, so no later sequence number shows the gap). The
// relay's heartbeats carry its last sequence: the router sees it is behind
// on two heartbeats in a row and syncs from the relay's mirror.
func lastBatchDropped(t *testing.T, f *faultRun) {
	s := newPyStack(t, pyOptions{engines: 1, proxy: true})
	e := s.engines[0]
	s.join(t, e, e.Addr)
	s.do(t, e, "store a 3", "store b 2")
	f.settle("before the drop", s.divergence(t, e.Addr, e))
	subject, err := api.EventSubject(model, e.Addr)
	if err != nil {
		t.Fatal(err)
	}
	beats := tapHeartbeats(t, "nats://"+s.router.NATSAddr, e.Addr)
	s.proxy.DropNext(subject, 1)
	lostAt := time.Now()
	answer, err := e.Do("store a 2")
	if err != nil {
		t.Fatal(err)
	}
	var lost uint64
	if _, err := fmt.Sscanf(answer, "ok %d", &lost); err != nil {
		t.Fatalf("engine answered %q: %v", answer, err)
	}
	// The loss is detectable from the first heartbeat naming the lost
	// batch's sequence: the fault's clearing point for the router.
	visible := beats.first(t, func(h api.Heartbeat) bool { return h.Seq != nil && *h.Seq >= lost })
	f.row.detection = visible.Sub(lostAt)
	f.row.note = "detection: the first heartbeat naming the lost sequence; the router syncs on the second"
	f.converged(visible, "after the last batch was lost", s.divergence(t, e.Addr, e))
	if s.proxy.Dropped() != 1 {
		t.Fatalf("the proxy dropped %d batches, want 1", s.proxy.Dropped())
	}
	wantCounter(t, s.metrics(), "warmroute_events_subscriber_syncs_total",
		map[string]string{"reason": "gap", "result": "ok"}, 0, 1)
}

// seqRestartAfterResync: the relay restarts (and republishes the engine's
// replay buffer from seq 0), and straight after that the engine's sequence
// starts over with new blocks, so its new batches carry numbers the resync
// just covered. They must replace the old chain, not be dropped as
// duplicates.
func seqRestartAfterResync(t *testing.T, f *faultRun) {
	s := newPyStack(t, pyOptions{engines: 1})
	e := s.engines[0]
	s.join(t, e, e.Addr)
	s.do(t, e, "store a 3", "store b 2", "store a 1")
	f.settle("before the relay restart", s.divergence(t, e.Addr, e))
	ctx := context.Background()
	epochSyncs := map[string]string{"reason": "epoch", "result": "ok"}
	synced := counter(t, s.metrics(), "warmroute_events_subscriber_syncs_total", epochSyncs)
	s.relays[0].Kill()
	if err := s.relays[0].Restart(ctx); err != nil { // resyncs from seq 0 on start
		t.Fatal(err)
	}
	// The new relay instance is a new epoch: the router syncs from its
	// mirror. The engine restarts straight after that sync; had it
	// restarted during it, the snapshot could already cover the restart's
	// reset, and the router would count no reset (the subscriber tests
	// cover that order).
	wantCounter(t, s.metrics(), "warmroute_events_subscriber_syncs_total", epochSyncs, synced, 1)
	restarts := map[string]string{"reason": "restart"}
	resets := counter(t, s.metrics(), "warmroute_events_subscriber_resets_total", restarts)
	at := time.Now()
	s.do(t, e, "restart", "store c 2", "store d 1", "store c 1", "store e 1")
	f.converged(at, "after the engine's sequence started over", s.divergence(t, e.Addr, e))
	wantCounter(t, s.metrics(), "warmroute_events_subscriber_resets_total", restarts, resets, 1)
}

// reannouncements: vLLM with kv_cache_report_mode=full announces reused
// blocks again; each is held once, so one BlockRemoved ends it.
func reannouncements(t *testing.T, f *faultRun) {
	s := newPyStack(t, pyOptions{engines: 1})
	e := s.engines[0]
	s.join(t, e, e.Addr)
	before := counter(t, s.metrics(), "warmroute_index_reannounced_blocks_total", nil)
	at := time.Now()
	s.do(t, e, "store a 4", "reannounce a", "store b 2", "reannounce a", "reannounce b")
	f.converged(at, "after re-announcements", s.divergence(t, e.Addr, e))
	at = time.Now()
	s.do(t, e, "remove a 4", "remove b 1")
	f.converged(at, "after one removal each", s.divergence(t, e.Addr, e))
	wantCounter(t, s.metrics(), "warmroute_index_reannounced_blocks_total", nil, before, 10)
}

// twoDPRanks: one endpoint served by two data-parallel ranks, each with its
// engine and relay; the second relay is left at the default --dp-rank, so
// it must take the rank from the payload. The index holds the union; a
// killed rank takes the endpoint out of routing and its restart drops only
// that rank's blocks.
func twoDPRanks(t *testing.T, f *faultRun) {
	s := newPyStack(t, pyOptions{engines: 2, sameEndpoint: true})
	e0, e1 := s.engines[0], s.engines[1]
	ep := e0.Addr
	s.join(t, e0, ep)
	s.join(t, e1, ep)
	s.do(t, e0, "store a 3", "store b 1")
	s.do(t, e1, "store c 2", "store a 2")
	f.settle("both ranks stored", s.divergence(t, ep, e0, e1))
	relayChanges := counter(t, s.metrics(), "warmroute_events_subscriber_resets_total", map[string]string{"reason": "relay_change"})
	at := time.Now()
	e1.Kill()
	f.detected(s.router, ep, "disconnected", at, faultHeartbeat)
	restarted := time.Now()
	if err := e1.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	clear := routerLogAfter(t, s.router, "endpoint live again", ep, restarted)
	f.converged(clear, "after rank 1 restarted", s.divergence(t, ep, e0, e1))
	s.join(t, e1, ep)
	s.do(t, e1, "store d 2")
	s.do(t, e0, "remove a 1")
	f.settle("after both ranks changed again", s.divergence(t, ep, e0, e1))
	wantCounter(t, "http://"+s.relays[1].AdminAddr+"/metrics", "warmroute_events_relay_dp_rank_mismatch_total", nil, 0, 1)
	if v := counter(t, s.metrics(), "warmroute_events_subscriber_resets_total", map[string]string{"reason": "relay_change"}); v != relayChanges {
		t.Errorf("resets{relay_change} moved by %v: the two ranks' relays thrash", v-relayChanges)
	}
}

// heartbeatTap records when each heartbeat of one endpoint reached NATS
// subscribers.
type heartbeatTap struct {
	ch chan tappedBeat
}

type tappedBeat struct {
	at time.Time
	h  api.Heartbeat
}

func tapHeartbeats(t *testing.T, url, endpoint string) *heartbeatTap {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	subj, err := api.HeartbeatSubject(model, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	tap := &heartbeatTap{ch: make(chan tappedBeat, 1024)}
	if _, err := nc.Subscribe(subj, func(m *nats.Msg) {
		b := tappedBeat{at: time.Now()}
		if json.Unmarshal(m.Data, &b.h) == nil {
			select {
			case tap.ch <- b:
			default:
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return tap
}

// first returns when the first heartbeat satisfying ok arrived.
func (tap *heartbeatTap) first(t *testing.T, ok func(api.Heartbeat) bool) time.Time {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case b := <-tap.ch:
			if ok(b.h) {
				return b.at
			}
		case <-deadline:
			t.Fatal("no matching heartbeat within 30s")
			return time.Time{}
		}
	}
}
