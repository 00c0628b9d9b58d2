package eventstest

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/internal/testwait"
)

// Model is the model the helpers publish under.
const Model = "org/m.v1"

// Run runs run until the test ends (or stop is called first),
// then cancels it, waits for it and reports any error it returned under
// name. stop is idempotent.
func Run(t testing.TB, name string, run func(context.Context) error) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("%s Run() = %v", name, err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// ConnectEmbedded starts an embedded NATS server configured by o and
// connects to it; both close when the test ends.
func ConnectEmbedded(t testing.TB, o bus.EmbeddedOptions) *nats.Conn {
	t.Helper()
	ns, err := bus.StartEmbeddedWith(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Close)
	nc, err := bus.ConnectOptions{URL: ns.ClientURL()}.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// Connect starts a plain embedded NATS server on loopback and connects to
// it; both close when the test ends.
func Connect(t testing.TB) *nats.Conn {
	t.Helper()
	return ConnectEmbedded(t, bus.EmbeddedOptions{Host: "127.0.0.1"})
}

// JetStreamConn starts an embedded server with JetStream stored in a temp
// dir and connects to it.
func JetStreamConn(t testing.TB) *nats.Conn {
	t.Helper()
	return ConnectEmbedded(t, bus.EmbeddedOptions{Host: "127.0.0.1", JetStreamDir: t.TempDir()})
}

// StoredPayload is a vLLM batch storing n 16-token blocks, hashes
// first..first+n-1, tokens from tok, chained to parent when parent != 0.
func StoredPayload(first, parent uint64, tok, n int) []byte {
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

// PublishTo publishes one message as endpoint's relay would.
func PublishTo(t testing.TB, nc *nats.Conn, endpoint string, seq uint64, reset bool, data []byte) {
	t.Helper()
	subj, _ := api.EventSubject(Model, endpoint)
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

// PlainCounter reads an unlabelled counter from reg; 0 when absent.
func PlainCounter(t testing.TB, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	return single(t, reg, name).GetCounter().GetValue()
}

// PlainGauge reads an unlabelled gauge from reg; 0 when absent.
func PlainGauge(t testing.TB, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	return single(t, reg, name).GetGauge().GetValue()
}

// HistogramCount reads an unlabelled histogram's sample count; 0 when absent.
func HistogramCount(t testing.TB, reg *prometheus.Registry, name string) uint64 {
	t.Helper()
	return single(t, reg, name).GetHistogram().GetSampleCount()
}

// single returns the one series of the unlabelled family name (nil when
// absent; its getters then read 0).
func single(t testing.TB, reg *prometheus.Registry, name string) *dto.Metric {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0]
		}
	}
	return nil
}

// WaitStored waits until stream holds n messages: a flushed core-NATS
// publish has reached the server, but the stream stores it asynchronously.
func WaitStored(t testing.TB, nc *nats.Conn, stream string, n int) {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 5*time.Second, func() string {
		st, err := js.Stream(context.Background(), stream)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.CachedInfo().State.Msgs; got < uint64(n) {
			return fmt.Sprintf("stream %s holds %d messages, want %d", stream, got, n)
		}
		return ""
	})
}

// CounterValue reads one labelled counter from reg; 0 when absent.
func CounterValue(t testing.TB, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == label && lp.GetValue() == value {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// StartSubscriber builds a subscriber on nc, starts it feeding sink and
// members (nil: none) and closes it when the test ends. m may be nil.
func StartSubscriber(t testing.TB, nc *nats.Conn, cfg subscriber.Config, follow subscriber.Follow,
	m *subscriber.Metrics, sink subscriber.Sink, members subscriber.Membership) *subscriber.Subscriber {
	t.Helper()
	s, err := subscriber.New(cfg, follow, nc, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background(), sink, members); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}
