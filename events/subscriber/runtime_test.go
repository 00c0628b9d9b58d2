package subscriber_test

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/internal/testwait"
	"github.com/warmroute/warmroute/scorer"
)

// These tests run the router side end to end as serve wires it: NATS
// (embedded or external), the subscriber, the index sink and discovery.

const (
	evModel    = "org/model-a"
	evStatic   = "10.20.0.1:8000"
	evDynamic  = "10.20.0.2:8000"
	evInterval = 100 * time.Millisecond
)

// listen is an events configuration with an embedded server on addr.
func listen(addr string) subscriber.Config {
	return subscriber.Config{Config: bus.Config{Listen: addr}}
}

// evRouter is a router's event ingestion as serve wires it: a bus client,
// a subscriber feeding an index sink and discovery into a static pool.
type evRouter struct {
	bus   *bus.Client
	sub   *subscriber.Subscriber
	ix    *index.Index
	pools *scorer.Pools
}

func startTestEvents(t *testing.T, ec subscriber.Config) *evRouter {
	t.Helper()
	pools := scorer.NewPools([]scorer.PoolConfig{{Name: evModel, Endpoints: []string{evStatic}}}, "")
	ix, err := index.New(index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := bus.Open(ec.Config, "test-router", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &evRouter{bus: c, ix: ix, pools: pools}
	t.Cleanup(r.close)
	m, err := subscriber.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if ec.HeartbeatMembership == nil {
		ec.HeartbeatMembership = subscriber.AnyEndpoint // these tests discover evDynamic
	}
	follow := subscriber.Follow{Models: []string{evModel}, Endpoints: map[string][]string{evModel: {evStatic}}}
	if r.sub, err = subscriber.New(ec, follow, c.Conn(), m, nil); err != nil {
		t.Fatal(err)
	}
	sink := subscriber.NewIndexSink(ix, m)
	if err := r.sub.Start(context.Background(), sink, subscriber.NewDiscovery(pools, sink, nil)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.sub.Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("subscriber not ready within 30s")
	}
	return r
}

// close stops the subscriber, then NATS, as serve does; idempotent.
func (r *evRouter) close() {
	if r.sub != nil {
		r.sub.Close()
	}
	r.bus.Close()
}

func (r *evRouter) endpoints(t *testing.T) []string {
	t.Helper()
	_, eps, err := r.pools.Lookup(evModel)
	if err != nil {
		t.Fatal(err)
	}
	return eps
}

// blocks is how many leading blocks of the test prompt evDynamic holds.
func (r *evRouter) blocks(t *testing.T) int {
	t.Helper()
	toks := make([]uint32, 16*4)
	for i := range toks {
		toks[i] = uint32(i)
	}
	keys, err := index.AppendKeys(nil, index.Identity{Model: evModel}, 16, toks)
	if err != nil {
		t.Fatal(err)
	}
	return r.ix.Lookup(keys, []string{evDynamic}, nil)[0].Blocks()
}

// fakeRelay publishes what a relay for evDynamic would, without an engine:
// heartbeats every evInterval while beating, and batches on demand.
type fakeRelay struct {
	nc   *nats.Conn
	seq  uint64
	stop chan struct{}
	wg   sync.WaitGroup
}

func newFakeRelay(t *testing.T, url string) *fakeRelay {
	t.Helper()
	nc, err := bus.ConnectOptions{URL: url, Name: "fake-relay"}.Connect()
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeRelay{nc: nc, stop: make(chan struct{})}
	t.Cleanup(func() { f.quiet(); nc.Close() })
	return f
}

func (f *fakeRelay) beat() {
	subj, _ := api.HeartbeatSubject(evModel, evDynamic)
	body, _ := json.Marshal(api.Heartbeat{Endpoint: evDynamic, Model: evModel, Relay: "fake",
		EngineConnected: true, Interval: api.Duration(evInterval), SentAt: time.Now()})
	_ = f.nc.Publish(subj, body) // fails while NATS is down; the next beat retries
}

// beating starts the heartbeat loop.
func (f *fakeRelay) beating() {
	f.wg.Go(func() {
		t := time.NewTicker(evInterval)
		defer t.Stop()
		for {
			f.beat()
			select {
			case <-f.stop:
				return
			case <-t.C:
			}
		}
	})
}

// quiet stops the heartbeats and waits for the loop; idempotent.
func (f *fakeRelay) quiet() {
	select {
	case <-f.stop:
	default:
		close(f.stop)
	}
	f.wg.Wait()
}

// store publishes the next batch: blocks 16-token blocks of 0, 1, 2, ...
func (f *fakeRelay) store(t *testing.T, blocks int) {
	t.Helper()
	hashes := make([]uint64, blocks)
	toks := make([]int, 16*blocks)
	for i := range hashes {
		hashes[i] = uint64(100 + i)
	}
	for i := range toks {
		toks[i] = i
	}
	payload, err := msgpack.Marshal([]any{float64(time.Now().UnixMicro()) / 1e6, []any{map[string]any{
		"type": "BlockStored", "block_hashes": hashes, "parent_block_hash": nil, "token_ids": toks,
		"block_size": 16}}, 0})
	if err != nil {
		t.Fatal(err)
	}
	subj, _ := api.EventSubject(evModel, evDynamic)
	h := nats.Header{api.EventKindHeader: {api.EventKindBatch}, api.EventSeqHeader: {strconv.FormatUint(f.seq, 10)},
		api.EventDPRankHeader: {"0"}, api.EventRelayHeader: {"fake"}, api.EventEndpointHeader: {evDynamic}}
	if err := f.nc.PublishMsg(&nats.Msg{Subject: subj, Header: h, Data: payload}); err != nil {
		t.Fatal(err)
	}
	f.seq++
}

func TestRuntimeEmbedded(t *testing.T) {
	r := startTestEvents(t, listen("127.0.0.1:0"))
	relay := newFakeRelay(t, r.bus.URL())
	t.Run("heartbeat adds the endpoint", func(t *testing.T) {
		relay.beating()
		testwait.Until(t, 15*time.Second, testwait.That("endpoint discovered", func() bool { return slices.Contains(r.endpoints(t), evDynamic) }))
	})
	t.Run("batches reach the index", func(t *testing.T) {
		relay.store(t, 3)
		testwait.Until(t, 15*time.Second, testwait.That("blocks indexed", func() bool { return r.blocks(t) == 3 }))
		if f, ok := r.sub.EndpointFreshness(evDynamic); !ok || !f.HasSeq || f.LastEvent.IsZero() {
			t.Fatalf("Freshness = %+v, %v", f, ok)
		}
	})
	t.Run("expiry removes and clears it, keeping static endpoints", func(t *testing.T) {
		relay.quiet()
		testwait.Until(t, 15*time.Second, testwait.That("endpoint expired", func() bool { return !slices.Contains(r.endpoints(t), evDynamic) }))
		if got := r.blocks(t); got != 0 {
			t.Errorf("expired endpoint still holds %d blocks", got)
		}
		if !slices.Equal(r.endpoints(t), []string{evStatic}) {
			t.Errorf("endpoints = %v, want only the static one", r.endpoints(t))
		}
		if _, ok := r.sub.EndpointFreshness(evDynamic); ok {
			t.Error("expired endpoint still has freshness")
		}
	})
}

// freePort returns a loopback port that was free a moment ago, drawn below
// the kernel's ephemeral range so that no outgoing connection of another
// test takes it before the process under test binds it.
func freePort(t *testing.T) int {
	t.Helper()
	ports, err := harness.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	return ports[0]
}

// TestRuntimeSurvivesNATSOutage: while the router's own NATS connection is
// down it cannot hear any relay, so nothing expires, however long the
// outage: the endpoint stays a candidate with what it held. Once NATS is
// back, silence counts again from the return: a relay that stays quiet
// expires one silence limit later.
func TestRuntimeSurvivesNATSOutage(t *testing.T) {
	port := freePort(t)
	ns, err := bus.StartEmbedded("127.0.0.1", port)
	if err != nil {
		t.Fatal(err)
	}
	url := ns.ClientURL()
	r := startTestEvents(t, subscriber.Config{Config: bus.Config{URL: url}})
	relay := newFakeRelay(t, url)
	relay.beating()
	relay.store(t, 2)
	testwait.Until(t, 15*time.Second, testwait.That("endpoint learnt", func() bool { return slices.Contains(r.endpoints(t), evDynamic) && r.blocks(t) == 2 }))

	ns.Close()
	testwait.Until(t, 15*time.Second, testwait.That("router disconnected", func() bool { return !r.bus.Conn().IsConnected() }))
	silence := time.Duration(subscriber.DefaultHeartbeatMisses) * evInterval
	time.Sleep(10 * silence) // ten silence limits without a word from anyone
	if !slices.Contains(r.endpoints(t), evDynamic) || r.blocks(t) != 2 {
		t.Fatalf("a router that cannot hear expired the endpoint: endpoints %v, %d blocks (want 2)", r.endpoints(t), r.blocks(t))
	}
	if reason, down := r.sub.Down(evDynamic); down {
		t.Fatalf("endpoint down (%s) while the router could not hear it", reason)
	}

	relay.quiet() // the relay will not speak after the outage
	ns, err = bus.StartEmbedded("127.0.0.1", port)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	testwait.Until(t, 15*time.Second, testwait.That("router reconnected", r.bus.Conn().IsConnected))
	back := time.Now()
	testwait.Until(t, 15*time.Second, testwait.That("silent endpoint expired after the return", func() bool {
		return !slices.Contains(r.endpoints(t), evDynamic) && r.blocks(t) == 0
	}))
	// back is when the poll saw the connection, up to one poll interval (50
	// ms by then) after the router's own reconnect, from which its silence
	// counts; an expiry at the return itself would still be caught.
	const pollLate = 60 * time.Millisecond
	if waited := time.Since(back); waited < silence-pollLate {
		t.Errorf("expired %v after NATS returned, before a silence limit (%v) could be heard", waited, silence)
	}
}

func TestRuntimeJetStreamRestart(t *testing.T) {
	ec := listen("127.0.0.1:" + strconv.Itoa(freePort(t)))
	ec.JetStream = bus.JetStreamConfig{Enabled: true, StoreDir: t.TempDir()}
	first := startTestEvents(t, ec)
	relay := newFakeRelay(t, first.bus.URL())
	relay.store(t, 4)
	testwait.Until(t, 15*time.Second, testwait.That("first router indexed", func() bool { return first.blocks(t) == 4 }))
	relay.nc.Close()
	first.close()

	// A new router on the same store replays the stream before it is ready.
	second := startTestEvents(t, ec)
	if got := second.blocks(t); got != 4 {
		t.Fatalf("restarted router holds %d blocks at ready, want 4", got)
	}
}
