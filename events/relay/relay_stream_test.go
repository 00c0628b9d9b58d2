package relay_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/events/eventstest"
	"github.com/warmroute/warmroute/events/relay"
	"github.com/warmroute/warmroute/internal/testwait"
)

// A relay configured with a stream creates it, so batches are retained even
// when no router has created it yet.
func TestRelayEnsuresStream(t *testing.T) {
	nc := eventstest.JetStreamConn(t)
	r, err := relay.New(relay.Config{EventsEndpoint: "tcp://127.0.0.1:1", Model: testModel,
		Endpoint: sinkEndpoint, HeartbeatInterval: time.Hour,
		Stream: bus.StreamConfig{Name: testStream, MaxAge: time.Minute}}, nc, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	eventstest.Run(t, "relay", r.Run)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 10*time.Second, testwait.That("stream created", func() bool {
		st, err := js.Stream(context.Background(), testStream)
		return err == nil && st.CachedInfo().Config.MaxAge == time.Minute
	}))
	eventstest.PublishTo(t, nc, sinkEndpoint, 1, false, eventstest.StoredPayload(1, 0, 0, 1))
	testwait.Until(t, 10*time.Second, testwait.That("batch retained", func() bool {
		st, err := js.Stream(context.Background(), testStream)
		return err == nil && st.CachedInfo().State.Msgs == 1
	}))
}
