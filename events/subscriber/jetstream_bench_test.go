package subscriber_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/events/eventstest"
	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/internal/testwait"
)

// BenchmarkJetStreamReplay measures a restarting router's time to ready:
// from starting a subscriber to Ready, with the stream holding the given
// number of retained blocks (16 per batch, 16-token blocks, spread over 8
// endpoints) and every one applied to a real index.
func BenchmarkJetStreamReplay(b *testing.B) {
	for _, blocks := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("blocks=%d", blocks), func(b *testing.B) {
			nc := eventstest.JetStreamConn(b)
			fillStream(b, nc, blocks, 16)
			b.ResetTimer()
			for b.Loop() {
				replayOnce(b, nc, blocks)
			}
			b.ReportMetric(float64(blocks), "blocks")
		})
	}
}

// fillStream publishes blocks blocks in batches of perBatch into a fresh
// stream and waits until the server has stored them all.
func fillStream(b *testing.B, nc *nats.Conn, blocks, perBatch int) {
	b.Helper()
	if err := bus.EnsureStream(context.Background(), nc, bus.StreamConfig{Name: testStream,
		MaxAge: time.Hour}); err != nil {
		b.Fatal(err)
	}
	msgs := blocks / perBatch
	for i := range msgs {
		ep := fmt.Sprintf("10.8.0.%d:8000", i%8+1)
		seq := uint64(i / 8)
		eventstest.PublishTo(b, nc, ep, seq, false, eventstest.StoredPayload(uint64(i*perBatch+1), 0, i*perBatch*16, perBatch))
	}
	js, _ := jetstream.New(nc)
	testwait.Until(b, 2*time.Minute, testwait.That(fmt.Sprintf("stream holding %d messages", msgs), func() bool {
		st, err := js.Stream(context.Background(), testStream)
		return err == nil && st.CachedInfo().State.Msgs == uint64(msgs)
	}))
}

func replayOnce(b *testing.B, nc *nats.Conn, wantBlocks int) {
	ix, err := index.New(index.Options{})
	if err != nil {
		b.Fatal(err)
	}
	cfg := subscriber.Config{}
	cfg.JetStream = bus.JetStreamConfig{Enabled: true, Stream: testStream}
	s, err := subscriber.New(cfg, subscriber.Follow{Models: []string{testModel}, ReplayTimeout: 5 * time.Minute}, nc, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Start(context.Background(), subscriber.NewIndexSink(ix, nil), nil); err != nil {
		b.Fatal(err)
	}
	<-s.Ready()
	b.StopTimer()
	s.Close()
	if got := ix.Stats().StoredBlocks; got != int64(wantBlocks) {
		b.Fatalf("replayed %d blocks, want %d", got, wantBlocks)
	}
	b.StartTimer()
}
