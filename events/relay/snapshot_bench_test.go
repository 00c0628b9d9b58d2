package relay

import (
	"context"
	"testing"
	"time"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/events/snapshot"
	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/internal/benchcpu"
)

// BenchmarkSnapshot1M is one sync of a 1M-block engine: the relay encodes
// its mirror, the chunks cross a real embedded NATS server to a second
// connection, and the router side keys them into an index rebuild and
// swaps it in (IndexSink's Rebuilder and Commit, what the subscriber runs).
// Every part runs in this process, so cpu-ns/op is relay, server and router
// together; ns/op is the wall time from request to applied.
func BenchmarkSnapshot1M(b *testing.B) {
	const n = 1_000_000
	ns, err := bus.StartEmbeddedWith(bus.EmbeddedOptions{Host: "127.0.0.1"})
	if err != nil {
		b.Fatal(err)
	}
	defer ns.Close()
	relayNC, err := bus.ConnectOptions{URL: ns.ClientURL()}.Connect()
	if err != nil {
		b.Fatal(err)
	}
	defer relayNC.Close()
	routerNC, err := bus.ConnectOptions{URL: ns.ClientURL()}.Connect()
	if err != nil {
		b.Fatal(err)
	}
	defer routerNC.Close()
	const model, ep = "bench/model", "10.1.0.1:8000"
	r, err := New(Config{EventsEndpoint: "tcp://127.0.0.1:1", Model: model, Endpoint: ep, MirrorMaxBlocks: n}, relayNC, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	fillMirror(r.mirror, n)
	sub, err := r.serveSnapshots()
	if err != nil {
		b.Fatal(err)
	}
	defer unsubscribe(sub)
	if err := relayNC.Flush(); err != nil {
		b.Fatal(err)
	}
	subj, _ := api.SnapshotSubject(model, ep, 0)
	src := subscriber.Source{Model: model, Endpoint: ep}
	b.ResetTimer()
	cpu := benchcpu.Start()
	for b.Loop() {
		b.StopTimer()
		ix, err := index.New(index.Options{BlockSize: 16})
		if err != nil {
			b.Fatal(err)
		}
		sink := subscriber.NewIndexSink(ix, nil)
		b.StartTimer()
		rb := sink.Rebuilder(src)
		if _, err := snapshot.Fetch(context.Background(), routerNC, subj, 10*time.Second, func(c *snapshot.Chunk) error {
			rb.AddChunk(c)
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		held, err := rb.Commit()
		if err != nil || held != n {
			b.Fatalf("applied %d blocks (%v), want %d", held, err, n)
		}
	}
	cpu.Report(b)
}
