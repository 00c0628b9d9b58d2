package relay_test

import (
	"context"
	"encoding/binary"
	"slices"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/nats-io/nats.go"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/events/eventstest"
	"github.com/warmroute/warmroute/events/relay"
	"github.com/warmroute/warmroute/internal/testwait"
)

// BenchmarkRelayForward measures one batch from a ZMQ PUB send, through the
// relay, to delivery at a NATS subscriber (so it includes NATS delivery as
// well as the relay's ZMQ-in to NATS-out path), one batch at a time.
func BenchmarkRelayForward(b *testing.B) {
	for _, blocks := range []int{1, 16} {
		b.Run(map[int]string{1: "blocks=1", 16: "blocks=16"}[blocks], func(b *testing.B) {
			benchRelayForward(b, blocks)
		})
	}
}

func benchRelayForward(b *testing.B, blocks int) {
	nc := eventstest.ConnectEmbedded(b, bus.EmbeddedOptions{Host: "127.0.0.1"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pub := zmq4.NewPub(ctx)
	defer pub.Close()
	if err := pub.Listen("tcp://127.0.0.1:0"); err != nil {
		b.Fatal(err)
	}
	got := make(chan *nats.Msg, 16)
	subj, _ := api.EventSubject("m", "10.0.0.1:8000")
	if _, err := nc.ChanSubscribe(subj, got); err != nil {
		b.Fatal(err)
	}
	r, err := relay.New(relay.Config{EventsEndpoint: "tcp://" + pub.Addr().String(),
		Model: "m", Endpoint: "10.0.0.1:8000"}, nc, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = r.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	payload := benchBatch(blocks)
	seq := warmUp(b, pub, got, payload)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		seq++
		start := time.Now()
		sendBatch(b, pub, seq, payload)
		<-got
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-us")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-us")
}

func benchBatch(blocks int) []byte {
	hashes := make([]uint64, blocks)
	toks := make([]int, blocks*16)
	for i := range hashes {
		hashes[i] = uint64(i + 1)
	}
	for i := range toks {
		toks[i] = 1000 + i
	}
	p, err := msgpack.Marshal([]any{1.0, []any{map[string]any{"type": "BlockStored",
		"block_hashes": hashes, "token_ids": toks, "block_size": 16}}, 0})
	if err != nil {
		panic(err)
	}
	return p
}

func sendBatch(b *testing.B, pub zmq4.Socket, seq uint64, payload []byte) {
	var s [8]byte
	binary.BigEndian.PutUint64(s[:], seq)
	if err := pub.Send(zmq4.NewMsgFrom([]byte{}, s[:], payload)); err != nil {
		b.Fatal(err)
	}
}

// warmUp publishes until the relay's subscription is live (ZMQ slow joiner)
// and returns the last sequence number used.
func warmUp(b *testing.B, pub zmq4.Socket, got chan *nats.Msg, payload []byte) uint64 {
	var seq uint64
	testwait.Until(b, 10*time.Second, func() string {
		sendBatch(b, pub, seq, payload)
		select {
		case <-got:
			return ""
		case <-time.After(20 * time.Millisecond):
			seq++
			return "relay never forwarded"
		}
	})
	return seq
}
