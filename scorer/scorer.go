package scorer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/warmroute/warmroute/index"
)

// Options configures a Scorer. The zero value routes on load alone.
type Options struct {
	// Fallbacks is how many further endpoints follow the chosen one.
	Fallbacks int
	// Index is the prefix index; nil routes every pool on load alone.
	Index *index.Index
	// Tokens turns prompts into token ids, per pool name. A pool without an
	// entry routes on load alone.
	Tokens map[string]Tokens
	// Scoring weighs the scorers.
	Scoring ScoringConfig
	// TTL sizes and trusts speculative entries. Nil means StaticTTL{}.
	TTL TTLPolicy
	// EngineLoad supplies engine gauges; nil leaves that scorer out.
	EngineLoad EngineLoad
	// Liveness excludes endpoints whose engine is known down from every
	// decision; nil treats every endpoint as live.
	Liveness Liveness
	// Metrics records stage timings and decision counts and exports the
	// Scorer's load; nil records nothing.
	Metrics *Metrics
	// Predictions receives committed decisions' predictions to share with
	// other router replicas; nil shares nothing.
	Predictions PredictionSink
	// LearnMaxModelLen makes Run ask the engines of every pool without a
	// configured maxModelLen for theirs (GET /v1/models) and bound its
	// prompts by it.
	LearnMaxModelLen bool
	// Affinity maps stored Responses response ids to their endpoints
	// (affinity.go); nil routes previous_response_id requests on load.
	Affinity Affinity
}

// Scorer picks endpoints for requests. Safe for concurrent use; build it
// with New.
type Scorer struct {
	pools   *Pools
	load    *Load
	opts    Options
	weights sync.Map // *pool -> weights, resolved once per pool
	nextID  atomic.Uint64
	scratch sync.Pool // *work
}

// New returns a Scorer over pools that tracks load in load.
func New(pools *Pools, load *Load, opts Options) *Scorer {
	if opts.TTL == nil {
		opts.TTL = StaticTTL{}
	}
	s := &Scorer{pools: pools, load: load, opts: opts}
	opts.Metrics.bindLoad(load)
	opts.Metrics.bindPools(pools, opts.Liveness)
	// Random high bits keep replicas' decision ids apart when they share
	// speculative entries.
	s.nextID.Store(rand.Uint64() &^ (1<<32 - 1))
	s.scratch.New = func() any { return new(work) }
	return s
}

// work is one decision's scratch space, pooled across decisions, so that
// scoring allocates nothing per decision but the Decision itself, which
// holds its keys (newDecision) and, when it fits, its reason, and which
// Done recycles in turn.
type work struct {
	field
	combiner
	fallbacks []int  // candidate indexes of the fallbacks
	reason    []byte // the reason, built here and copied out once
	loadRefs  loadRefs
	ids       []uint32 // the prompt's token ids, read only until keyed
}

// maxPooledIDs bounds the id buffer a pooled work keeps (1 MiB): a rare huge
// prompt's buffer is dropped rather than held by the pool.
const maxPooledIDs = 1 << 18

// Pick chooses an endpoint for req. With a tokenizer and an index for the
// pool it weighs each eligible endpoint's cached prefix against load;
// otherwise load alone decides. Near-ties are broken at random so replicas
// and bursts spread.
func (s *Scorer) Pick(ctx context.Context, req *Request) (*Decision, error) {
	pl, endpoints, err := s.pools.lookup(req.Model)
	if err != nil {
		return nil, err
	}
	candidates := eligible(endpoints, req.Subset)
	if len(candidates) == 0 {
		return nil, fmt.Errorf("pool %q has %d endpoints, %d in the subset hint: %w",
			pl.name, len(endpoints), len(candidates), ErrNoEndpoint)
	}
	if candidates = s.live(candidates); len(candidates) == 0 {
		return nil, fmt.Errorf("pool %q: every eligible endpoint's engine is down: %w", pl.name, ErrNoEndpoint)
	}
	if req.PreviousResponseID != "" {
		return s.pickAffinityPD(pl, req, candidates)
	}
	if s.saturated(candidates) {
		return nil, fmt.Errorf("pool %q: %d candidates, each with at least %g waiting requests: %w",
			pl.name, len(candidates), s.opts.Scoring.ShedWaiting, ErrSaturated)
	}
	if roles := pl.pdRoles(); roles != nil {
		return s.pickPD(ctx, pl, req, candidates, roles)
	}
	w := s.scratch.Get().(*work)
	defer s.putWork(w)
	d, note := s.prepare(ctx, w, pl, req, candidates)
	s.decide(w, pl, candidates, d, note)
	return d, nil
}

// putWork returns w to the pool, dropping an id buffer grown past
// maxPooledIDs so one huge prompt does not pin its memory.
func (s *Scorer) putWork(w *work) {
	if cap(w.ids) > maxPooledIDs {
		w.ids = nil
	}
	s.scratch.Put(w)
}

// saturated reports whether shedding is on and every candidate's engine
// reports at least ShedWaiting waiting requests; a candidate without fresh
// gauges is not saturated, so missing data never sheds.
func (s *Scorer) saturated(candidates []string) bool {
	limit := s.opts.Scoring.ShedWaiting
	if limit <= 0 || s.opts.EngineLoad == nil {
		return false
	}
	for _, ep := range candidates {
		if _, waiting, _, ok := s.opts.EngineLoad.EngineLoad(ep); !ok || !(waiting >= limit) {
			return false
		}
	}
	return true
}

// prepare runs the prefix stages (tokens, keys) when the pool has them and
// returns the new decision, its keys in its own allocation (newDecision). It
// also returns a note for the reason when prefix routing was not possible.
func (s *Scorer) prepare(ctx context.Context, w *work, pl *pool, req *Request, candidates []string) (*Decision, string) {
	d, note := s.prepareIn(ctx, w, pl, req, candidates)
	d.Pool, d.model, d.s, d.ID = pl.name, pl.name, s, index.DecisionID(s.nextID.Add(1))
	return d, note
}

// prepareIn is prepare before the decision's identity is set: it sizes the
// Decision for the prompt's keys once the prompt is tokenized.
func (s *Scorer) prepareIn(ctx context.Context, w *work, pl *pool, req *Request, candidates []string) (*Decision, string) {
	tokens := s.opts.Tokens[pl.name]
	if s.opts.Index == nil || tokens == nil {
		return newDecision(0), "tokenizer=none"
	}
	start := time.Now()
	ids, err := s.tokenize(ctx, tokens, pl, req, candidates, w)
	s.opts.Metrics.observe(stageTokenize, start)
	if err != nil {
		reason := tokenizeReason(err)
		s.opts.Metrics.tokenizeError(reason)
		if reason == "too_long" {
			return newDecision(0), "tokenize=too_long"
		}
		return newDecision(0), "tokenize=error"
	}
	start = time.Now()
	bs := s.opts.Index.BlockSize()
	d := newDecision(len(ids) / max(bs, 1))
	d.blockSize = bs
	d.keys, err = index.AppendKeys(d.keys, pl.identity(req), d.blockSize, ids)
	s.opts.Metrics.observe(stageKeys, start)
	if err != nil {
		d.keys = nil
		s.opts.Metrics.tokenizeError("keys")
		return d, "tokenize=error"
	}
	d.promptTokens = len(ids)
	return d, ""
}

// tokenize bounds the work on one prompt by the pool's limit: too much text
// is refused unread, too many tokens after reading. A TokenAppender appends
// into w's buffer, which keeps the grown buffer for the next decision.
func (s *Scorer) tokenize(ctx context.Context, tokens Tokens, pl *pool, req *Request, candidates []string, w *work) ([]uint32, error) {
	limit := pl.limitOf()
	if err := limit.checkBytes(req); err != nil {
		return nil, err
	}
	var ids []uint32
	var err error
	if a, ok := tokens.(TokenAppender); ok {
		ids, err = a.AppendTokens(ctx, req, candidates, w.ids[:0])
		if cap(ids) > cap(w.ids) {
			w.ids = ids[:0]
		}
	} else {
		ids, err = tokens.Tokens(ctx, req, candidates)
	}
	if err != nil {
		return nil, err
	}
	return ids, limit.checkTokens(len(ids))
}

// decide looks the keys up, scores the candidates and fills d.
func (s *Scorer) decide(w *work, pl *pool, candidates []string, d *Decision, note string) {
	f := &w.field
	f.endpoints, f.blocks = candidates, len(d.keys)
	f.loads = s.load.readCached(candidates, &w.loadRefs, f.loads)
	if f.blocks > 0 {
		start := time.Now()
		f.matches = s.opts.Index.Lookup(d.keys, candidates, f.matches)
		s.opts.Metrics.observe(stageLookup, start)
		f.trust = s.trust(f, pl.name)
	}
	start := time.Now()
	w.combiner = combiner{w: s.weightsOf(pl), engine: s.opts.EngineLoad, part: w.part, total: w.total}
	total := w.combine(f)
	best, fb, ties := choose(total, w.w.epsilon, s.opts.Fallbacks, w.fallbacks)
	w.fallbacks = fb
	s.opts.Metrics.observe(stageScore, start)
	d.Endpoint = candidates[best]
	d.Fallbacks = d.inlineFallbacks[:0]
	if len(fb) > len(d.inlineFallbacks) {
		d.Fallbacks = make([]string, 0, len(fb))
	}
	for _, j := range fb {
		d.Fallbacks = append(d.Fallbacks, candidates[j])
	}
	if f.blocks > 0 {
		d.Match = f.matches[best]
		d.Basis = basisOf(d.Match)
	}
	d.prefill = int64(max(0, d.promptTokens-d.Match.Blocks()*d.blockSize))
	w.reason = appendReason(w.reason[:0], f, best, total[best], ties, w.herded, note)
	d.setReason(w.reason)
	s.opts.Metrics.decision(d.Basis)
}

// weightsOf resolves a pool's weights on first use, so pools that discovery
// creates after New are weighed like configured ones.
func (s *Scorer) weightsOf(pl *pool) weights {
	if w, ok := s.weights.Load(pl); ok {
		return w.(weights)
	}
	w := resolveWeights(s.opts.Scoring)
	s.weights.Store(pl, w)
	return w
}

// trust asks the TTL policy once per candidate that matched speculatively;
// the others' trust is never read.
func (s *Scorer) trust(f *field, model string) []float64 {
	f.trust = resize(f.trust, len(f.endpoints))
	for i, m := range f.matches {
		if m.Speculative > 0 {
			f.trust[i] = clamp01(s.opts.TTL.Trust(f.endpoints[i], model))
		}
	}
	return f.trust
}

// begin inserts the chosen endpoint's missing blocks as predictions and
// starts the TTL policy's clock.
func (s *Scorer) begin(d *Decision) {
	at := d.prefillAt() // the endpoint whose cache the prompt fills
	newSpec := s.speculate(d, at, d.Match.Confirmed, true)
	s.opts.TTL.Begin(d.ID, Route{
		Endpoint: at, Model: d.model, PromptTokens: d.promptTokens,
		MatchedConfirmed: d.Match.Confirmed, MatchedSpeculative: d.Match.Speculative,
		NewSpeculative: newSpec, BlockSize: d.blockSize, At: time.Now(),
	})
}

// speculate predicts that endpoint will hold the decision's blocks from
// keys[from] on, for the TTL the policy gives there (none when it pauses
// speculation), shares the prediction and returns how many entries are new.
// A deferred insert is the commit's: from is the prefill endpoint's
// confirmed count, and index.SpeculateDeferred predicts the whole
// continuation and leaves the expiry of the shards it writes to the
// decision's Settle. A fallback that served gets them all (from 0), and
// SpeculateAt skips what it holds confirmed.
func (s *Scorer) speculate(d *Decision, endpoint string, from int, deferred bool) int {
	ttl := s.opts.TTL.TTL(endpoint, d.model)
	if ttl <= 0 {
		return 0
	}
	// The index's clock stamps the prediction, so the expiry shared with
	// other replicas is the one inserted here.
	at := s.opts.Index.Now()
	p := index.Prediction{Endpoint: endpoint, Model: d.model, Keys: d.keys[from:],
		Decision: d.ID, DecidedAt: at, ExpiresAt: at.Add(ttl)}
	// The error cases (empty endpoint) cannot happen for a pool endpoint.
	var n int
	if deferred {
		n, _ = s.opts.Index.SpeculateDeferred(p)
		d.settleFrom = from
		d.unsettled.Store(true)
	} else {
		n, _ = s.opts.Index.SpeculateAt(p)
	}
	if s.opts.Predictions != nil && len(p.Keys) > 0 {
		d.shared.Store(true) // the sink may keep p.Keys: never recycled
		s.opts.Predictions.Predicted(p)
	}
	return n
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
