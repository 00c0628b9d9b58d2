package fleet

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/index/ttl"
	"github.com/warmroute/warmroute/scorer"
)

// Result is what one (regime, policy, seed) run measured.
type Result struct {
	Regime, Policy string
	Seed           uint64
	Requests       int
	PromptTokens   int64
	CachedTokens   int64
	// SpeculativeRoutes used a prediction; FalseWarm are those whose engine
	// did not have every predicted block (the router's
	// warmroute_ttl_speculative_routes_total{result="miss"} rule).
	SpeculativeRoutes, FalseWarm int
	TTFTp50, TTFTp99             time.Duration
	// TTL is the TTL in force at the end, per endpoint ("-" without a
	// controller); Advised the value an advised run used.
	TTL     string
	Advised time.Duration
	// StaleBlocks counts predictions that ended unconfirmed.
	StaleBlocks int64
	// Virtual is how long the run lasted on the virtual clock.
	Virtual time.Duration
}

// HitRate is cached over prompt tokens.
func (r Result) HitRate() float64 {
	if r.PromptTokens == 0 {
		return 0
	}
	return float64(r.CachedTokens) / float64(r.PromptTokens)
}

// Uncached is the prompt tokens the engines had to prefill.
func (r Result) Uncached() int64 { return r.PromptTokens - r.CachedTokens }

// FalseWarmShare is false warm routes per routed request.
func (r Result) FalseWarmShare() float64 {
	if r.Requests == 0 {
		return 0
	}
	return float64(r.FalseWarm) / float64(r.Requests)
}

// Run runs policy in regime with seed. An advised run first runs the same
// cell in advise mode and then static at the advice (2 s when none formed).
func Run(reg Regime, policy string, seed uint64, t Tuning) (Result, error) {
	if policy == PolicyAdvised {
		m, err := run(reg, policyAdvise, seed, t, 0)
		if err != nil {
			return Result{}, err
		}
		advised := m.Advised
		if advised <= 0 {
			advised = ttl.DefaultStatic
		}
		res, err := run(reg, PolicyAdvised, seed, t, advised)
		res.Advised = advised
		return res, err
	}
	return run(reg, policy, seed, t, 0)
}

func seedOf(seed uint64, parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum64() ^ seed*0x9e3779b97f4a7c15
}

func run(reg Regime, policy string, seed uint64, t Tuning, advised time.Duration) (Result, error) {
	var pc *ttl.Config
	if cfg, ok := ttlConfig(policy, advised, t); ok {
		pc = &cfg
	}
	return runConfig(reg, policy, seed, t, pc)
}

// runConfig runs policy with the controller configuration cfg (nil: none).
func runConfig(reg Regime, policy string, seed uint64, t Tuning, cfg *ttl.Config) (Result, error) {
	l := &loop{}
	sessions := reg.Work.sessions(rand.New(rand.NewPCG(seedOf(seed, reg.Name, "workload"), 1)), reg.SilentFailRate)
	names := make([]string, reg.Endpoints)
	for i := range names {
		names[i] = fmt.Sprintf("10.0.0.%d:8000", i+1)
	}
	var rt *router
	var err error
	if policy != PolicyOracle {
		rt, err = newRouter(l, names, reg.Path, policy != PolicyLoad, cfg)
		if err != nil {
			return Result{}, fmt.Errorf("building the router for %s: %w", policy, err)
		}
	}
	engines := make([]*engine, reg.Endpoints)
	byName := map[string]*engine{}
	for i, n := range names {
		rng := rand.New(rand.NewPCG(seedOf(seed, reg.Name, n), 2))
		deliver := func(ev index.Stored) {
			if rt != nil {
				rt.apply(ev, l.now)
			}
		}
		engines[i] = newEngine(n, l, reg.Cost, reg.Latency[i%len(reg.Latency)], reg.Path, rng, deliver)
		byName[n] = engines[i]
	}
	res := Result{Regime: reg.Name, Policy: policy, Seed: seed}
	var ttfts []time.Duration
	open := len(sessions)
	var send func(s *session, i int)
	send = func(s *session, i int) {
		tr := s.Turns[i]
		keys, _ := index.AppendKeys(nil, identity, BlockSize, tr.Tokens) // ids fit in 32 bits by construction
		j := &job{tokens: tr.Tokens, keys: keys, silent: tr.Silent}
		var d *scorer.Decision
		var target *engine
		if rt == nil {
			target = oracle(engines, keys)
		} else {
			rt.tokens.next = tr.Tokens
			d, err = rt.s.Pick(context.Background(), &scorer.Request{Kind: scorer.KindCompletion, Model: model})
			if err != nil {
				panic(fmt.Sprintf("routing: %v", err)) // a static pool of live endpoints always has a pick
			}
			d.Commit()
			target = byName[d.Endpoint]
		}
		j.firstToken = func() {
			if d != nil {
				d.ResponseStarted()
			}
		}
		j.done = func(ttft time.Duration, cached int) {
			res.Requests++
			res.PromptTokens += int64(len(tr.Tokens))
			res.CachedTokens += int64(cached)
			ttfts = append(ttfts, ttft)
			if d != nil {
				if d.Match.Speculative > 0 {
					res.SpeculativeRoutes++
					if falseWarm(d.Match, len(tr.Tokens), cached) {
						res.FalseWarm++
					}
				}
				d.Usage(len(tr.Tokens), cached, true)
				d.Release()
			}
			if i+1 < len(s.Turns) {
				l.after(s.Turns[i].Think, func() { send(s, i+1) })
				return
			}
			open--
		}
		target.submit(j)
	}
	for i := range sessions {
		s := &sessions[i]
		l.at(s.Start, func() { send(s, 0) })
	}
	if rt != nil {
		var tick func(n int)
		tick = func(n int) {
			rt.tick(l.clock(), n%int(t.Interval/sweepEvery) == 0)
			if open > 0 {
				l.after(sweepEvery, func() { tick(n + 1) })
			}
		}
		l.at(0, func() { tick(0) })
	}
	l.run(time.Duration(1<<62 - 1))
	res.Virtual = l.now
	slices.Sort(ttfts)
	res.TTFTp50, res.TTFTp99 = quantile(ttfts, 0.50), quantile(ttfts, 0.99)
	res.TTL = "-"
	if rt != nil && rt.ctrl != nil {
		rep := rt.ctrl.Report()
		res.TTL = ttlsInForce(rep)
		res.StaleBlocks = rt.stale
		if rep.Overall.Advice.Ready {
			res.Advised = rep.Overall.Advice.TTL.D()
		}
	}
	return res, nil
}

// sweepEvery is the router's index sweep period (scorer.DefaultSweepInterval).
const sweepEvery = scorer.DefaultSweepInterval

// oracle sends to the engine holding the longest true cached prefix,
// fewest in flight on ties.
func oracle(engines []*engine, keys []index.Key) *engine {
	best, bestN := engines[0], -1
	for _, e := range engines {
		n := e.cachedBlocks(keys)
		if n > bestN || (n == bestN && e.load() < best.load()) {
			best, bestN = e, n
		}
	}
	return best
}

// falseWarm is the router's rule for a speculative route that missed: the
// engine did not serve every predicted block of the cacheable prompt.
func falseWarm(m index.Match, promptTokens, cached int) bool {
	cacheable := max(promptTokens-1, 0) / BlockSize * BlockSize
	confirmed := min(m.Confirmed*BlockSize, cacheable)
	expected := min((m.Confirmed+m.Speculative)*BlockSize, cacheable)
	return expected > confirmed && cached < expected
}

func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

// ttlsInForce names the TTL of each endpoint ("paused" when the guard
// paused it), or the single value when all agree.
func ttlsInForce(rep ttl.Report) string {
	var vals []string
	for _, row := range rep.Rows {
		v := row.Current.D().String()
		if row.Paused {
			v = "paused"
		}
		vals = append(vals, v)
	}
	if len(vals) == 0 {
		return rep.Overall.Current.D().String()
	}
	same := true
	for _, v := range vals {
		same = same && v == vals[0]
	}
	if same {
		return vals[0]
	}
	return strings.Join(vals, "/")
}
