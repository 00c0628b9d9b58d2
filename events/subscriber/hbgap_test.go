package subscriber_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/eventstest"
)

// beatSeq is a heartbeat naming seq as the relay's last forwarded batch.
func (r *snapRelay) beatSeq(seq uint64) {
	r.t.Helper()
	subj, _ := api.HeartbeatSubject(testModel, syncEP)
	body, _ := json.Marshal(api.Heartbeat{Endpoint: syncEP, Model: testModel, Relay: "snap", EngineConnected: true,
		Interval: api.Duration(time.Second), SentAt: time.Now(), Epoch: r.epoch, Seq: &seq})
	if err := r.nc.Publish(subj, body); err != nil {
		r.t.Fatal(err)
	}
}

// TestLostLastBatchIsSynced: a batch lost on the bus with nothing after it
// shows only in heartbeats naming a later sequence than the router applied.
// Two such heartbeats in a row with the same sequence start a sync; a
// heartbeat naming what was applied does not.
func TestLostLastBatchIsSynced(t *testing.T) {
	nc := eventstest.Connect(t)
	relay := newSnapRelay(t, nc, 7, true)
	r := startSyncRouter(t, nc, 5*time.Second)
	relay.beatSeq(2)
	relay.answer(relay.request(), 2, chain(3), 3, 1)
	r.waitRun(t, 3, 3)
	relay.beatSeq(2)
	relay.beatSeq(2)
	r.waitHandled(t, relay)
	if got := r.syncs(t, "gap", "ok"); got != 0 {
		t.Fatalf("heartbeats naming the applied sequence started %v gap syncs", got)
	}
	// Batch 3 (the chain's fourth block) is lost; the engine then idles.
	relay.beatSeq(3)
	relay.beatSeq(3)
	relay.answer(relay.request(), 3, chain(4), 4, 1)
	r.waitRun(t, 4, 4)
	r.waitSyncs(t, "gap", "ok", 1)
}
