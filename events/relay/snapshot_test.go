package relay

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/eventstest"
	"github.com/warmroute/warmroute/events/snapshot"
	"github.com/warmroute/warmroute/events/wire"
)

// TestSnapshotAnswersItsOwnRankOnly: a relay answers snapshot requests for
// the rank it publishes under and stays silent for the endpoint's other
// ranks (their relays share the subscription); what it sends is the
// mirror with the last applied sequence.
func TestSnapshotAnswersItsOwnRankOnly(t *testing.T) {
	nc := eventstest.Connect(t)
	r, err := New(Config{EventsEndpoint: "tcp://127.0.0.1:1", Model: "m", Endpoint: "10.0.0.9:8000", DPRank: 1}, nc, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.mirror.apply(41, &wire.Batch{Events: []wire.Event{storedEv(0, false, "", 0, 7, 8)}})
	sub, err := r.serveSnapshots()
	if err != nil {
		t.Fatal(err)
	}
	defer unsubscribe(sub)
	fetch := func(rank int, timeout time.Duration) (snapshot.Header, int, error) {
		subj, _ := api.SnapshotSubject("m", "10.0.0.9:8000", rank)
		n := 0
		h, err := snapshot.Fetch(context.Background(), nc, subj, timeout, func(c *snapshot.Chunk) error {
			n += len(c.Blocks)
			return nil
		})
		return h, n, err
	}
	h, n, err := fetch(1, 5*time.Second)
	if err != nil || n != 2 || h.Seq != 41 || !h.HasSeq || h.Epoch != r.mirror.Epoch() || h.Total != 2 {
		t.Fatalf("own rank: %+v, %d blocks, %v", h, n, err)
	}
	if _, _, err := fetch(0, 300*time.Millisecond); !errors.Is(err, snapshot.ErrTimeout) {
		t.Fatalf("other rank: %v, want silence (ErrTimeout)", err)
	}
}
