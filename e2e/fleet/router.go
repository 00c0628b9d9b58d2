package fleet

import (
	"context"
	"time"

	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/index/ttl"
	"github.com/warmroute/warmroute/scorer"
)

// model is the one pool and model every request names.
const model = "m"

// identity is what the scorer keys prompts under for the pool, so engine
// hashes and router keys agree.
var identity = index.Identity{Model: model}

// Heartbeats: relays beat every HeartbeatInterval and the subscriber gives an
// endpoint up after HeartbeatMisses silent intervals (compare's settings:
// a 5 s silence limit).
const (
	HeartbeatInterval = 250 * time.Millisecond
	HeartbeatMisses   = 20
)

// freshness is the subscriber's view of each endpoint's stream, the
// controller's FreshnessSource.
type freshness struct {
	l    *loop
	path EventPath
	last map[string]time.Duration // when the last batch was applied
}

func (f *freshness) Freshness(endpoint string) (ttl.Freshness, bool) {
	if f.path == Down {
		return ttl.Freshness{}, false // never heard: no heartbeat has arrived
	}
	fr := ttl.Freshness{Connected: true, SilenceLimit: HeartbeatMisses * HeartbeatInterval,
		LastHeartbeat: epoch.Add(f.l.now / HeartbeatInterval * HeartbeatInterval)}
	if t, ok := f.last[endpoint]; ok {
		fr.LastEvent = epoch.Add(t)
	}
	return fr, true
}

// clocked stamps routes with the virtual clock: the scorer stamps Route.At
// with the wall clock, which a virtual-time run does not follow.
type clocked struct {
	*ttl.Controller
	now func() time.Time
}

func (c clocked) Begin(id index.DecisionID, r ttl.Route) {
	r.At = c.now()
	c.Controller.Begin(id, r)
}

// givenTokens hands the scorer the token ids of the request being routed:
// the fleet's prompts are token ids already, and a run is single-threaded.
type givenTokens struct{ next []uint32 }

func (g *givenTokens) Tokens(context.Context, *scorer.Request, []string) ([]uint32, error) {
	return g.next, nil
}

// router is the real routing core of one run.
type router struct {
	s      *scorer.Scorer
	ix     *index.Index
	ctrl   *ttl.Controller
	tokens *givenTokens
	fresh  *freshness
	// stale counts predicted blocks that ended unconfirmed.
	stale int64
}

// newRouter builds the scorer for policy; prefix is false for load only,
// cfg is nil for confirmed only (speculation off).
func newRouter(l *loop, endpoints []string, path EventPath, prefix bool, cfg *ttl.Config) (*router, error) {
	r := &router{fresh: &freshness{l: l, path: path, last: map[string]time.Duration{}}, tokens: &givenTokens{}}
	pools := scorer.NewPools([]scorer.PoolConfig{{Name: model, Endpoints: endpoints}}, "")
	if !prefix {
		r.s = scorer.New(pools, &scorer.Load{}, scorer.Options{})
		return r, nil
	}
	opts := scorer.Options{Tokens: map[string]scorer.Tokens{model: r.tokens}, TTL: scorer.StaticTTL{D: -1}}
	iopts := index.Options{BlockSize: BlockSize, Grace: Grace, Now: l.clock}
	if cfg != nil {
		ctrl, err := ttl.New(ttl.Options{Config: *cfg, Grace: Grace, Freshness: r.fresh, Now: l.clock})
		if err != nil {
			return nil, err
		}
		r.ctrl = ctrl
		iopts.Observer = index.ObserverFunc(func(o index.Outcome) {
			if o.Kind == index.StaleExpiry {
				r.stale += int64(o.Blocks)
			}
			ctrl.Observe(o)
		})
		opts.TTL = clocked{ctrl, l.clock}
	}
	ix, err := index.New(iopts)
	if err != nil {
		return nil, err
	}
	r.ix, opts.Index = ix, ix
	r.s = scorer.New(pools, &scorer.Load{}, opts)
	return r, nil
}

// apply is the subscriber handing a batch to the index.
func (r *router) apply(ev index.Stored, now time.Duration) {
	r.fresh.last[ev.Endpoint] = now
	if r.ix != nil {
		_, _ = r.ix.Store(ev) // events are well formed by construction
	}
}

// tick is the periodic work of the router: the index sweep and, with a
// controller, its advice round.
func (r *router) tick(now time.Time, step bool) {
	if r.ix != nil {
		r.ix.Sweep()
	}
	if step && r.ctrl != nil {
		r.ctrl.Step(now)
	}
}
