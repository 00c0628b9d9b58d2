package subscriber_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/eventstest"
	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/index/ttl"
	"github.com/warmroute/warmroute/internal/testwait"
	"github.com/warmroute/warmroute/scorer"
)

const testModel = eventstest.Model

// discovering admits any endpoint by heartbeat, as these tests use
// endpoints they do not configure.
var discovering = subscriber.Config{HeartbeatMembership: subscriber.AnyEndpoint}

// stored encodes a vLLM batch storing (or removing) the given hashes.
func batchPayload(kind string, hashes ...uint64) []byte {
	b, err := msgpack.Marshal([]any{1.0, []any{map[string]any{"type": kind, "block_hashes": hashes,
		"token_ids": []int{}, "block_size": 0}}, 0})
	if err != nil {
		panic(err)
	}
	return b
}

// msgOp is one message a fake relay publishes.
type msgOp struct {
	relay string
	seq   uint64
	reset api.ResetReason // non-empty: a reset instead of a batch
	data  []byte
}

func publish(t *testing.T, nc *nats.Conn, endpoint string, op msgOp) {
	t.Helper()
	subj, _ := api.EventSubject(testModel, endpoint)
	kind := api.EventKindBatch
	if op.reset != "" {
		kind = api.EventKindReset
	}
	h := nats.Header{}
	h.Set(api.EventKindHeader, kind)
	h.Set(api.EventSeqHeader, strconv.FormatUint(op.seq, 10))
	h.Set(api.EventDPRankHeader, "0")
	h.Set(api.EventRelayHeader, op.relay)
	h.Set(api.EventEndpointHeader, endpoint)
	h.Set(api.EventResetReasonHeader, string(op.reset))
	if err := nc.PublishMsg(&nats.Msg{Subject: subj, Header: h, Data: op.data}); err != nil {
		t.Fatal(err)
	}
}

func stored(relay string, seq uint64, hashes ...uint64) msgOp {
	return msgOp{relay: relay, seq: seq, data: batchPayload("BlockStored", hashes...)}
}

func runSubscriber(t *testing.T, nc *nats.Conn, sink subscriber.Sink, members subscriber.Membership) *subscriber.Subscriber {
	t.Helper()
	return eventstest.StartSubscriber(t, nc, discovering, subscriber.Follow{Models: []string{testModel}}, nil,
		sink, members)
}

func beat(t *testing.T, nc *nats.Conn, endpoint string, leaving bool, interval time.Duration) {
	t.Helper()
	subj, _ := api.HeartbeatSubject(testModel, endpoint)
	body, _ := json.Marshal(api.Heartbeat{Endpoint: endpoint, Model: testModel, Relay: "r",
		EngineConnected: true, Interval: api.Duration(interval), SentAt: time.Now(), Leaving: leaving})
	if err := nc.Publish(subj, body); err != nil {
		t.Fatal(err)
	}
}

func TestSubscriberSequencing(t *testing.T) {
	nc := eventstest.Connect(t)
	tests := []struct {
		name       string
		ops        []msgOp
		wantBlocks []uint64
		wantCalls  [2]int // ApplyBatch, ClearSource
		wantGaps   uint64
	}{
		{"in order", []msgOp{stored("a", 5, 1), stored("a", 6, 2), stored("a", 7, 3)}, []uint64{1, 2, 3}, [2]int{3, 0}, 0},
		{"duplicate dropped", []msgOp{stored("a", 5, 1), stored("a", 6, 2), stored("a", 6, 9)}, []uint64{1, 2}, [2]int{2, 0}, 0},
		{"gap clears", []msgOp{stored("a", 5, 1), stored("a", 7, 3)}, []uint64{3}, [2]int{2, 1}, 1},
		{"reset clears and resumes", []msgOp{stored("a", 5, 1), {relay: "a", seq: 0, reset: api.ResetRestart}, stored("a", 0, 2)},
			[]uint64{2}, [2]int{2, 1}, 0},
		{"malformed clears", []msgOp{stored("a", 5, 1), {relay: "a", seq: 6, data: []byte{0xc1}}, stored("a", 7, 3)},
			[]uint64{3}, [2]int{2, 1}, 0},
		{"new relay restarting the stream clears", []msgOp{stored("a", 5, 1), stored("b", 0, 2)}, []uint64{2}, [2]int{2, 1}, 0},
		{"new relay continuing the stream keeps", []msgOp{stored("a", 5, 1), stored("b", 6, 2)}, []uint64{1, 2}, [2]int{2, 0}, 0},
		{"removed", []msgOp{stored("a", 5, 1, 2), {relay: "a", seq: 6, data: batchPayload("BlockRemoved", 1)}},
			[]uint64{2}, [2]int{2, 0}, 0},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sink := &eventstest.Sink{}
			s := runSubscriber(t, nc, sink, nil)
			endpoint := "10.0.0." + strconv.Itoa(i+1) + ":8000"
			src := subscriber.Source{Model: testModel, Endpoint: endpoint}
			for _, op := range tc.ops {
				publish(t, nc, endpoint, op)
			}
			testwait.Until(t, 10*time.Second, testwait.That("batches applied", func() bool {
				b, c := sink.Counts()
				return b == tc.wantCalls[0] && c == tc.wantCalls[1]
			}))
			if got := sink.Blocks(src); !slices.Equal(got, tc.wantBlocks) {
				t.Fatalf("blocks = %v, want %v", got, tc.wantBlocks)
			}
			if f, _ := s.SourceFreshness(src); f.Gaps != tc.wantGaps || f.LastEvent.IsZero() {
				t.Fatalf("freshness = %+v, want %d gaps", f, tc.wantGaps)
			}
		})
	}
}

func TestSubscriberMembership(t *testing.T) {
	nc := eventstest.Connect(t)
	sink, members := &eventstest.Sink{}, &eventstest.Membership{}
	s := runSubscriber(t, nc, sink, members)
	leaver := subscriber.Source{Model: testModel, Endpoint: "10.1.0.1:8000"}
	silent := subscriber.Source{Model: testModel, Endpoint: "10.1.0.2:8000"}
	t.Run("heartbeat brings a source up", func(t *testing.T) {
		beat(t, nc, leaver.Endpoint, false, time.Hour)
		beat(t, nc, silent.Endpoint, false, 50*time.Millisecond)
		testwait.Until(t, 10*time.Second, testwait.That("sources up", func() bool { return members.Up(leaver) && members.Up(silent) }))
	})
	t.Run("leaving heartbeat clears and removes", func(t *testing.T) {
		publish(t, nc, leaver.Endpoint, stored("r", 1, 7))
		testwait.Until(t, 10*time.Second, testwait.That("block stored", func() bool { return len(sink.Blocks(leaver)) == 1 }))
		beat(t, nc, leaver.Endpoint, true, time.Hour)
		testwait.Until(t, 10*time.Second, testwait.That("source down", func() bool { return !members.Up(leaver) }))
		if len(sink.Blocks(leaver)) != 0 {
			t.Fatal("leaving source kept its blocks")
		}
	})
	t.Run("silent source expires", func(t *testing.T) {
		testwait.Until(t, 10*time.Second, testwait.That("expired", func() bool { return !members.Up(silent) }))
		if _, ok := s.SourceFreshness(silent); ok {
			t.Fatal("expired source still has freshness")
		}
		if !slices.Contains(members.Events(), "down "+silent.Endpoint+" expired") {
			t.Fatalf("membership log = %v", members.Events())
		}
	})
}

// TestFreshnessSilenceLimit: the subscriber reports to the TTL guard the
// silence limit it expires the endpoint at, HeartbeatMisses of the longest
// heartbeat interval among the endpoint's ranks, and the engine's load.
func TestFreshnessSilenceLimit(t *testing.T) {
	nc := eventstest.Connect(t)
	s := eventstest.StartSubscriber(t, nc, subscriber.Config{HeartbeatMisses: 5, HeartbeatMembership: subscriber.AnyEndpoint},
		subscriber.Follow{Models: []string{testModel}}, nil, &eventstest.Sink{}, nil)
	const ep = "127.0.0.7:1"
	if _, ok := s.Freshness(ep); ok {
		t.Fatal("freshness of an endpoint never heard")
	}
	beat(t, nc, ep, false, time.Hour) // long enough not to expire during the test
	testwait.Until(t, 10*time.Second, testwait.That("heartbeat applied", func() bool { _, ok := s.Freshness(ep); return ok }))
	f, _ := s.Freshness(ep)
	if f.SilenceLimit != 5*time.Hour || !f.Connected || f.LastHeartbeat.IsZero() {
		t.Fatalf("Freshness = %+v, want a 5h silence limit, connected, a heartbeat", f)
	}
	if _, _, _, ok := s.EngineLoad(ep); ok {
		t.Error("engine load reported although the heartbeat carried none")
	}
}

// A Subscriber is what serve hands the TTL controller and the scorer.
var (
	_ ttl.FreshnessSource = (*subscriber.Subscriber)(nil)
	_ ttl.BacklogGauge    = (*subscriber.Subscriber)(nil)
	_ scorer.EngineLoad   = (*subscriber.Subscriber)(nil)
)

// TestCloseWithoutStart: a subscriber built but never started (serve failed
// later in its construction) closes at once, twice, and knows no source.
func TestCloseWithoutStart(t *testing.T) {
	s, err := subscriber.New(subscriber.Config{}, subscriber.Follow{AllModels: true}, eventstest.Connect(t), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Freshness("10.0.0.1:8000"); ok || len(s.Sources()) != 0 || s.Backlog() != 0 {
		t.Fatal("an unstarted subscriber reports state")
	}
	s.Close()
	s.Close()
}

func TestStartRejectsNilSink(t *testing.T) {
	s, err := subscriber.New(subscriber.Config{}, subscriber.Follow{AllModels: true}, eventstest.Connect(t), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Start(context.Background(), nil, nil); !errors.Is(err, subscriber.ErrInvalidConfig) {
		t.Fatalf("Start(nil sink) = %v, want ErrInvalidConfig", err)
	}
}

func jsonHeartbeat(h api.Heartbeat) ([]byte, error) { return json.Marshal(h) }
