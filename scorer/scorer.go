package scorer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
)

// Options configures a Scorer.
type Options struct {
	// Fallbacks is how many further endpoints follow the chosen one.
	Fallbacks int
}

// Scorer picks endpoints for requests. Safe for concurrent use.
type Scorer struct {
	pools *Pools
	load  *Load
	opts  Options
}

// New returns a Scorer over pools that tracks load in load.
func New(pools *Pools, load *Load, opts Options) *Scorer {
	return &Scorer{pools: pools, load: load, opts: opts}
}

// Decision is the outcome of Pick for one request. Commit it once Envoy has
// been told where to send the request; Release it when the request ends. A
// decision that is never committed (abandoned) costs nothing.
type Decision struct {
	// Pool names the pool the endpoint came from.
	Pool string
	// Endpoint is the chosen "ip:port".
	Endpoint string
	// Fallbacks are further endpoints in preference order.
	Fallbacks []string
	// Reason explains the choice for the decision header and debug logs.
	Reason string

	load      *Load
	committed atomic.Bool
	released  atomic.Bool
}

// Targets returns Endpoint followed by Fallbacks.
func (d *Decision) Targets() []string {
	return append([]string{d.Endpoint}, d.Fallbacks...)
}

// Commit starts the request's load accounting. Calling it twice is a no-op.
func (d *Decision) Commit() {
	if d.committed.CompareAndSwap(false, true) && d.load != nil {
		d.load.add(d.Endpoint, 1)
	}
}

// Release ends the request's load accounting. It is idempotent and a no-op for
// a decision that was never committed.
func (d *Decision) Release() {
	if d.committed.Load() && d.released.CompareAndSwap(false, true) && d.load != nil {
		d.load.add(d.Endpoint, -1)
	}
}

// Pick chooses an endpoint for req: the least-loaded eligible endpoint of the
// model's pool, ties broken at random so replicas and bursts spread.
func (s *Scorer) Pick(_ context.Context, req *Request) (*Decision, error) {
	poolName, endpoints, err := s.pools.Lookup(req.Model)
	if err != nil {
		return nil, err
	}
	candidates := eligible(endpoints, req.Subset)
	if len(candidates) == 0 {
		return nil, fmt.Errorf("pool %q has %d endpoints, %d in the subset hint: %w",
			poolName, len(endpoints), len(candidates), ErrNoEndpoint)
	}
	ranked := s.rankByLoad(candidates)
	n := min(1+s.opts.Fallbacks, len(ranked))
	d := &Decision{
		Pool:      poolName,
		Endpoint:  ranked[0].endpoint,
		Fallbacks: endpointsOf(ranked[1:n]),
		load:      s.load,
	}
	d.Reason = fmt.Sprintf("basis=load; inflight=%d; candidates=%d", ranked[0].inflight, len(candidates))
	return d, nil
}

type candidate struct {
	endpoint string
	inflight int64
}

func (s *Scorer) rankByLoad(endpoints []string) []candidate {
	cs := make([]candidate, len(endpoints))
	for i, ep := range endpoints {
		cs[i] = candidate{endpoint: ep, inflight: s.load.InFlight(ep)}
	}
	rand.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
	slices.SortStableFunc(cs, func(a, b candidate) int { return int(a.inflight - b.inflight) })
	return cs
}

func endpointsOf(cs []candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.endpoint
	}
	return out
}

// eligible returns the pool endpoints allowed by the subset hint (all of them
// when subset is nil).
func eligible(endpoints, subset []string) []string {
	if subset == nil {
		return endpoints
	}
	var out []string
	for _, ep := range endpoints {
		if slices.ContainsFunc(subset, func(s string) bool { return strings.TrimSpace(s) == ep }) {
			out = append(out, ep)
		}
	}
	return out
}
