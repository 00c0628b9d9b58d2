package subscriber_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/index"
)

const testStream = "KVTEST"

// jetStreamConn starts an embedded server with JetStream stored in a temp
// dir and connects to it.
func jetStreamConn(t testing.TB) *nats.Conn {
	t.Helper()
	return connectEmbedded(t, bus.EmbeddedOptions{Host: "127.0.0.1", JetStreamDir: t.TempDir()})
}

// storedPayload is a vLLM batch storing n 16-token blocks, hashes
// first..first+n-1, tokens from tok, chained to parent when parent != 0.
func storedPayload(first, parent uint64, tok, n int) []byte {
	hashes := make([]uint64, n)
	toks := make([]int, 16*n)
	for i := range hashes {
		hashes[i] = first + uint64(i)
	}
	for i := range toks {
		toks[i] = tok + i
	}
	var p any
	if parent != 0 {
		p = parent
	}
	b, err := msgpack.Marshal([]any{1.0, []any{map[string]any{"type": "BlockStored", "block_hashes": hashes,
		"parent_block_hash": p, "token_ids": toks, "block_size": 16}}, 0})
	if err != nil {
		panic(err)
	}
	return b
}

// publishTo publishes one message as endpoint's relay would.
func publishTo(t testing.TB, nc *nats.Conn, endpoint string, seq uint64, reset bool, data []byte) {
	t.Helper()
	subj, _ := api.EventSubject(testModel, endpoint)
	kind := api.EventKindBatch
	if reset {
		kind = api.EventKindReset
	}
	h := nats.Header{api.EventKindHeader: {kind}, api.EventSeqHeader: {strconv.FormatUint(seq, 10)},
		api.EventDPRankHeader: {"0"}, api.EventRelayHeader: {"r1"}, api.EventEndpointHeader: {endpoint},
		api.EventResetReasonHeader: {string(api.ResetRestart)}}
	if err := nc.PublishMsg(&nats.Msg{Subject: subj, Header: h, Data: data}); err != nil {
		t.Fatal(err)
	}
}

// startReplaying runs a subscriber that replays stream into a fresh index
// and waits for Ready.
func startReplaying(t testing.TB, nc *nats.Conn, stream string, reg *prometheus.Registry) (*subscriber.Subscriber, *index.Index) {
	t.Helper()
	ix, err := index.New(index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := subscriber.New(subscriber.Config{Models: []string{testModel}, ReplayStream: stream,
		ReplayTimeout: 30 * time.Second}, nc, subscriber.NewIndexSink(ix, reg), nil, reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	runInBackground(t, "subscriber", s.Run)
	select {
	case <-s.Ready():
	case <-time.After(60 * time.Second):
		t.Fatal("subscriber not ready within 60s")
	}
	return s, ix
}

func TestJetStreamReplay(t *testing.T) {
	type msg struct {
		seq   uint64
		reset bool
		data  []byte
	}
	tests := []struct {
		name         string
		stream       string // stream replayed; testStream is the one created
		msgs         []msg
		wantBlocks   int
		wantReplayed float64
		wantFailures float64
	}{
		{"empty stream", testStream, nil, 0, 0, 0},
		{"batches rebuild the index", testStream, []msg{{5, false, storedPayload(1, 0, 0, 2)},
			{6, false, storedPayload(3, 2, 32, 1)}}, 3, 2, 0},
		{"a retained reset clears what came before", testStream, []msg{{5, false, storedPayload(1, 0, 0, 2)},
			{0, true, nil}, {0, false, storedPayload(11, 0, 0, 1)}}, 1, 3, 0},
		{"a retained gap clears", testStream, []msg{{5, false, storedPayload(1, 0, 0, 2)},
			{9, false, storedPayload(11, 0, 1000, 1)}}, 0, 2, 0},
		{"a retained malformed batch clears", testStream, []msg{{5, false, storedPayload(1, 0, 0, 2)},
			{6, false, []byte{0xc1}}}, 0, 2, 0},
		{"missing stream: ready from live events", "NOSUCH", []msg{{5, false, storedPayload(1, 0, 0, 2)}}, 0, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nc := jetStreamConn(t)
			if err := bus.EnsureStream(context.Background(), nc, bus.StreamConfig{Name: testStream,
				MaxAge: time.Minute}); err != nil {
				t.Fatal(err)
			}
			for _, m := range tc.msgs {
				publishTo(t, nc, sinkEndpoint, m.seq, m.reset, m.data)
			}
			if err := nc.Flush(); err != nil {
				t.Fatal(err)
			}
			waitStored(t, nc, testStream, len(tc.msgs))
			reg := prometheus.NewRegistry()
			_, ix := startReplaying(t, nc, tc.stream, reg)
			// Ready means caught up: no waiting beyond it.
			if got := lookup(t, ix, index.Identity{Model: testModel}, 3).Blocks(); got != tc.wantBlocks {
				t.Errorf("blocks at ready = %d, want %d", got, tc.wantBlocks)
			}
			if got := plainCounter(t, reg, "warmroute_events_replay_messages_total"); got != tc.wantReplayed {
				t.Errorf("replayed = %v, want %v", got, tc.wantReplayed)
			}
			if got := plainCounter(t, reg, "warmroute_events_replay_failures_total"); got != tc.wantFailures {
				t.Errorf("replay failures = %v, want %v", got, tc.wantFailures)
			}
			if n := histogramCount(t, reg, "warmroute_events_subscriber_event_lag_seconds"); n != 0 {
				t.Errorf("replayed batches recorded %d live-lag samples, want 0", n)
			}
		})
	}
}

func TestJetStreamReplayThenLive(t *testing.T) {
	nc := jetStreamConn(t)
	if err := bus.EnsureStream(context.Background(), nc, bus.StreamConfig{Name: testStream}); err != nil {
		t.Fatal(err)
	}
	publishTo(t, nc, sinkEndpoint, 5, false, storedPayload(1, 0, 0, 1))
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	waitStored(t, nc, testStream, 1)
	_, ix := startReplaying(t, nc, testStream, prometheus.NewRegistry())
	// The next batch continues the replayed sequence, so it must apply
	// without a gap clearing the replayed block.
	publishTo(t, nc, sinkEndpoint, 6, false, storedPayload(2, 1, 16, 2))
	eventually(t, "live batch applied", func() bool {
		return lookup(t, ix, index.Identity{Model: testModel}, 3).Blocks() == 3
	})
}

func TestEnsureStreamRejectsEmptyName(t *testing.T) {
	nc := jetStreamConn(t)
	if err := bus.EnsureStream(context.Background(), nc, bus.StreamConfig{}); !errors.Is(err, bus.ErrInvalidConfig) {
		t.Fatalf("EnsureStream(no name) = %v, want ErrInvalidConfig", err)
	}
}

// plainCounter reads an unlabelled counter from reg; 0 when absent.
func plainCounter(t testing.TB, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}

// histogramCount reads an unlabelled histogram's sample count; 0 when absent.
func histogramCount(t testing.TB, reg *prometheus.Registry, name string) uint64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	return 0
}

// waitStored waits until stream holds n messages: a flushed core-NATS
// publish has reached the server, but the stream stores it asynchronously.
func waitStored(t testing.TB, nc *nats.Conn, stream string, n int) {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := js.Stream(context.Background(), stream)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.CachedInfo().State.Msgs; got >= uint64(n) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("stream %s holds %d messages after 5s, want %d", stream, st.CachedInfo().State.Msgs, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
