package predictions_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/eventstest"
	"github.com/warmroute/warmroute/events/predictions"
	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/index/ttl"
	"github.com/warmroute/warmroute/internal/testclock"
	"github.com/warmroute/warmroute/scorer"
)

const testModel = eventstest.Model

var replicaEndpoints = []string{"10.0.0.1:8000", "10.0.0.2:8000"}

// givenTokens is a scorer.Tokens for requests that carry token ids.
type givenTokens struct{}

func (givenTokens) Tokens(_ context.Context, req *scorer.Request, _ []string) ([]uint32, error) {
	out := make([]uint32, len(req.PromptTokenIDs[0]))
	for i, v := range req.PromptTokenIDs[0] {
		out[i] = uint32(v)
	}
	return out, nil
}

// replica is one in-process router: index, TTL controller, scorer, event
// subscriber and prediction share, as `warmroute serve` wires them.
type replica struct {
	ix     *index.Index
	ctrl   *ttl.Controller
	scorer *scorer.Scorer
	share  *predictions.Share
	reg    *prometheus.Registry
	stop   func()
}

// replicaOptions configure startReplica. Replicas share one clock, so
// expiry can be probed exactly; start it at the real time so NATS-side ages
// agree.
type replicaOptions struct {
	name   string
	clock  *testclock.Manual
	stream string // prediction stream to replay at start
	queue  int
	local  bool // keep predictions local (a baseline for benchmarks)
}

func startReplica(t testing.TB, nc *nats.Conn, o replicaOptions) *replica {
	t.Helper()
	r := &replica{reg: prometheus.NewRegistry()}
	tm, err := ttl.NewMetrics(r.reg)
	if err != nil {
		t.Fatal(err)
	}
	if r.ctrl, err = ttl.New(ttl.Options{Config: ttl.Config{Static: api.Duration(2 * time.Second)},
		Replica: o.name, Metrics: tm}); err != nil {
		t.Fatal(err)
	}
	if r.ix, err = index.New(index.Options{Observer: r.ctrl, Now: o.clock.Now}); err != nil {
		t.Fatal(err)
	}
	pm, err := predictions.NewMetrics(r.reg)
	if err != nil {
		t.Fatal(err)
	}
	if r.share, err = predictions.New(predictions.Options{Replica: predictions.NewReplicaID(o.name),
		Config: predictions.Config{Stream: o.stream, QueueSize: o.queue}, Replay: o.stream != ""},
		nc, pm, nil); err != nil {
		t.Fatal(err)
	}
	var sink scorer.PredictionSink = r.share
	if o.local {
		sink = nil
	}
	pools := scorer.NewPools([]scorer.PoolConfig{{Name: testModel, Endpoints: replicaEndpoints}}, "")
	r.scorer = scorer.New(pools, &scorer.Load{}, scorer.Options{Index: r.ix, TTL: r.ctrl,
		Tokens: map[string]scorer.Tokens{testModel: givenTokens{}}, Predictions: sink})
	sm, err := subscriber.NewMetrics(r.reg)
	if err != nil {
		t.Fatal(err)
	}
	follow := subscriber.Follow{Models: []string{testModel}, Endpoints: map[string][]string{testModel: replicaEndpoints}}
	sub, err := subscriber.New(subscriber.Config{}, follow, nc, sm, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Start(context.Background(), subscriber.NewIndexSink(r.ix, sm), nil); err != nil {
		t.Fatal(err)
	}
	if err := r.share.Start(context.Background(), r.ix); err != nil {
		t.Fatal(err)
	}
	r.stop = sync.OnceFunc(func() { r.share.Close(); sub.Close() })
	t.Cleanup(r.stop)
	waitReady(t, r.share.Ready())
	return r
}

func waitReady(t testing.TB, ready <-chan struct{}) {
	t.Helper()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatal("not ready within 30s")
	}
}

// decide routes a completion of blocks 16-token blocks starting at token
// tok and commits it.
func (r *replica) decide(t testing.TB, tok, blocks int) *scorer.Decision {
	t.Helper()
	ids := make([]int, 16*blocks+1)
	for i := range ids {
		ids[i] = tok + i
	}
	d, err := r.scorer.Pick(context.Background(), &scorer.Request{Kind: scorer.KindCompletion, Model: testModel,
		PromptTokenIDs: [][]int{ids}})
	if err != nil {
		t.Fatal(err)
	}
	d.Commit()
	return d
}

// match is what r's index holds of those blocks on endpoint.
func (r *replica) match(t testing.TB, endpoint string, tok, blocks int) index.Match {
	t.Helper()
	toks := make([]uint32, 16*blocks)
	for i := range toks {
		toks[i] = uint32(tok + i)
	}
	keys, err := index.AppendKeys(nil, index.Identity{Model: testModel}, 16, toks)
	if err != nil {
		t.Fatal(err)
	}
	return r.ix.Lookup(keys, []string{endpoint}, nil)[0]
}

func (r *replica) endings() ttl.Endings { return r.ctrl.Report().Overall.Endings }
