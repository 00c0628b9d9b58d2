package scorer

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warmroute/warmroute/index"
)

const bs = 4 // small blocks keep the test prompts short

var pipePools = []PoolConfig{{
	Name: "m", LoRAAdapters: []string{"m-sql"},
	Endpoints: []string{"10.0.0.1:8000", "10.0.0.2:8000", "10.0.0.3:8000"},
}}

// idTokens is a Tokens for requests that carry token ids.
type idTokens struct{}

func (idTokens) Tokens(_ context.Context, req *Request, _ []string) ([]uint32, error) {
	_, ids, ok := firstPrompt(req)
	if !ok || ids == nil {
		return nil, errors.New("test tokens: no ids")
	}
	return tokenIDs(ids)
}

// AppendTokens makes idTokens a TokenAppender, as LocalTokens is, so the
// decision benchmarks reuse the id buffer like production does.
func (idTokens) AppendTokens(_ context.Context, req *Request, _ []string, dst []uint32) ([]uint32, error) {
	_, ids, ok := firstPrompt(req)
	if !ok || ids == nil {
		return dst, errors.New("test tokens: no ids")
	}
	return appendTokenIDs(dst, ids)
}

// policy is an in-memory TTLPolicy and UsageObserver that records calls.
type policy struct {
	ttl   time.Duration
	trust float64
	mu    sync.Mutex
	began []Route
	moved []Route
	usage []int
}

func (p *policy) TTL(string, string) time.Duration { return p.ttl }
func (p *policy) Trust(string, string) float64     { return p.trust }
func (p *policy) Begin(_ index.DecisionID, r Route) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.began = append(p.began, r)
}
func (p *policy) Moved(_ index.DecisionID, r Route) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.moved = append(p.moved, r)
}
func (p *policy) Usage(_ index.DecisionID, prompt, cached int, known bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if known {
		p.usage = append(p.usage, prompt, cached)
	}
}

type pipe struct {
	s    *Scorer
	ix   *index.Index
	load *Load
	pol  *policy
}

func newPipe(t testing.TB, scoring ScoringConfig) *pipe {
	t.Helper()
	ix, err := index.New(index.Options{BlockSize: bs})
	if err != nil {
		t.Fatal(err)
	}
	p := &pipe{ix: ix, load: &Load{}, pol: &policy{ttl: time.Minute, trust: 1}}
	p.s = New(NewPools(pipePools, ""), p.load, Options{
		Index: ix, Tokens: map[string]Tokens{"m": idTokens{}}, Scoring: scoring, TTL: p.pol, Fallbacks: 1,
	})
	return p
}

// prompt returns n tokens of a sequence named by seed.
func prompt(seed, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = seed*1000 + i
	}
	return out
}

func (p *pipe) store(t testing.TB, ep string, ids []int, id index.Identity) {
	t.Helper()
	toks := make([]uint32, len(ids)/bs*bs)
	hashes := make([]uint64, len(toks)/bs)
	for i := range toks {
		toks[i] = uint32(ids[i])
	}
	for i := range hashes {
		hashes[i] = uint64(ids[0])<<20 | uint64(i)
	}
	if _, err := p.ix.Store(index.Stored{Endpoint: ep, Hashes: hashes, Tokens: toks, BlockSize: bs, Identity: id}); err != nil {
		t.Fatal(err)
	}
}

func (p *pipe) pick(t testing.TB, req *Request) *Decision {
	t.Helper()
	d, err := p.s.Pick(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func completion(ids []int) *Request {
	return &Request{Kind: KindCompletion, Model: "m", PromptTokenIDs: [][]int{ids}}
}

func TestPickFollowsConfirmedPrefix(t *testing.T) {
	p := newPipe(t, ScoringConfig{})
	ids := prompt(1, 10*bs+2)
	p.store(t, "10.0.0.2:8000", ids[:6*bs], index.Identity{Model: "m"})
	for range 20 { // no randomness may move it: the prefix decides
		d := p.pick(t, completion(ids))
		if d.Endpoint != "10.0.0.2:8000" || d.Basis != BasisConfirmed {
			t.Fatalf("endpoint %s basis %s, want 10.0.0.2:8000 confirmed (%s)", d.Endpoint, d.Basis, d.Reason)
		}
		if want := "basis=confirmed; matched=6c+0s/10; endpoint=10.0.0.2:8000"; !strings.HasPrefix(d.Reason, want) {
			t.Fatalf("reason %q, want prefix %q", d.Reason, want)
		}
		if !strings.HasSuffix(d.Reason, "because=longest prefix") {
			t.Fatalf("reason %q does not say longest prefix", d.Reason)
		}
	}
}

func TestCommitSpeculatesMissingBlocks(t *testing.T) {
	p := newPipe(t, ScoringConfig{})
	ids := prompt(2, 10*bs)
	p.store(t, "10.0.0.3:8000", ids[:4*bs], index.Identity{Model: "m"})
	d := p.pick(t, completion(ids))
	d.Commit()
	if len(p.pol.began) != 1 {
		t.Fatalf("Begin called %d times, want 1", len(p.pol.began))
	}
	r := p.pol.began[0]
	want := Route{Endpoint: "10.0.0.3:8000", Model: "m", PromptTokens: 40, MatchedConfirmed: 4, NewSpeculative: 6, BlockSize: bs, At: r.At}
	if r != want {
		t.Fatalf("route = %+v, want %+v", r, want)
	}
	d.Release()
	// The follow-up matches the prediction: split confirmed/speculative.
	d2 := p.pick(t, completion(append(ids, 7, 7)))
	if d2.Endpoint != "10.0.0.3:8000" || d2.Basis != BasisSpeculative {
		t.Fatalf("follow-up %s basis %s, want 10.0.0.3:8000 speculative", d2.Endpoint, d2.Basis)
	}
	if want := "basis=speculative; matched=4c+6s/10;"; !strings.HasPrefix(d2.Reason, want) {
		t.Fatalf("reason %q, want prefix %q", d2.Reason, want)
	}
	d2.Commit()
	if got := p.pol.began[1]; got.MatchedSpeculative != 6 || got.NewSpeculative != 0 {
		t.Fatalf("second route = %+v, want 6 matched speculative and none new", got)
	}
}

func TestSpeculationPausedByPolicy(t *testing.T) {
	tests := []struct {
		name      string
		ttl       time.Duration
		trust     float64
		wantSpec  int
		wantBasis Basis
	}{
		{name: "running", ttl: time.Minute, trust: 1, wantSpec: 5, wantBasis: BasisSpeculative},
		{name: "paused", ttl: 0, trust: 0, wantSpec: 0, wantBasis: BasisNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPipe(t, ScoringConfig{})
			p.pol.ttl, p.pol.trust = tt.ttl, tt.trust
			ids := prompt(3, 5*bs)
			d := p.pick(t, completion(ids))
			d.Commit()
			if got := p.pol.began[0].NewSpeculative; got != tt.wantSpec {
				t.Fatalf("speculative inserts = %d, want %d", got, tt.wantSpec)
			}
			d2 := p.pick(t, completion(ids))
			if d2.Basis != tt.wantBasis {
				t.Fatalf("follow-up basis %s, want %s (%s)", d2.Basis, tt.wantBasis, d2.Reason)
			}
		})
	}
}

// An untrusted prediction still sits in the index but scores nothing, so
// load decides.
func TestSpeculativeTrustWeighsPrefix(t *testing.T) {
	p := newPipe(t, ScoringConfig{})
	ids := prompt(4, 8*bs)
	d := p.pick(t, completion(ids))
	d.Commit() // d stays in flight: its endpoint is the most loaded
	p.pol.trust = 0
	seen := map[string]bool{}
	for range 100 {
		seen[p.pick(t, completion(ids)).Endpoint] = true
	}
	if seen[d.Endpoint] {
		t.Fatalf("untrusted prediction still drew traffic to %s: %v", d.Endpoint, seen)
	}
}

func TestHotPrefixSpreads(t *testing.T) {
	p := newPipe(t, ScoringConfig{HerdMargin: Float(2)})
	ids := prompt(5, 8*bs)
	hot := "10.0.0.1:8000"
	p.store(t, hot, ids, index.Identity{Model: "m"})
	var got []string
	for range 6 {
		d := p.pick(t, completion(ids))
		d.Commit() // none released: load builds up
		got = append(got, d.Endpoint)
	}
	// The first picks stay on the warm endpoint; once it carries more than
	// twice the margin above the others the prefix stops counting.
	if got[0] != hot || got[1] != hot {
		t.Fatalf("picks %v, want the warm endpoint first", got)
	}
	spilled := false
	for _, ep := range got {
		spilled = spilled || ep != hot
	}
	if !spilled {
		t.Fatalf("picks %v: a loaded warm endpoint never spilled", got)
	}
	if p.load.InFlight(hot) > 5 {
		t.Fatalf("hot endpoint carries %d, want at most 2*margin+1", p.load.InFlight(hot))
	}
}

func TestHerdSpillReason(t *testing.T) {
	p := newPipe(t, ScoringConfig{HerdMargin: Float(1), LoadWeight: Float(1)})
	ids := prompt(6, 4*bs)
	p.store(t, "10.0.0.1:8000", ids, index.Identity{Model: "m"})
	p.load.add("10.0.0.1:8000", 5)
	d := p.pick(t, completion(ids))
	if d.Endpoint == "10.0.0.1:8000" || !strings.HasSuffix(d.Reason, "because=hot prefix spread") {
		t.Fatalf("decision %s (%s), want a spill away from the hot endpoint", d.Endpoint, d.Reason)
	}
}

func TestLoRAAndSaltKeying(t *testing.T) {
	ids := prompt(7, 4*bs)
	tests := []struct {
		name      string
		storedAs  index.Identity
		model     string
		salt      string
		wantBasis Basis
	}{
		{name: "base model", storedAs: index.Identity{Model: "m"}, model: "m", wantBasis: BasisConfirmed},
		{name: "adapter", storedAs: index.Identity{Model: "m", LoRA: "m-sql"}, model: "m-sql", wantBasis: BasisConfirmed},
		{name: "adapter blocks do not serve base", storedAs: index.Identity{Model: "m", LoRA: "m-sql"}, model: "m", wantBasis: BasisNone},
		{name: "salted", storedAs: index.Identity{Model: "m", CacheSalt: "t1"}, model: "m", salt: "t1", wantBasis: BasisConfirmed},
		{name: "other salt", storedAs: index.Identity{Model: "m", CacheSalt: "t1"}, model: "m", salt: "t2", wantBasis: BasisNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPipe(t, ScoringConfig{})
			p.store(t, "10.0.0.2:8000", ids, tt.storedAs)
			req := completion(ids)
			req.Model, req.CacheSalt = tt.model, tt.salt
			if d := p.pick(t, req); d.Basis != tt.wantBasis {
				t.Fatalf("basis %s, want %s (%s)", d.Basis, tt.wantBasis, d.Reason)
			}
		})
	}
}

func TestRoutesOnLoadWithoutPrefix(t *testing.T) {
	tests := []struct {
		name   string
		tokens Tokens
		req    *Request
		want   string
	}{
		{name: "no tokenizer", tokens: nil, req: completion(prompt(8, 8)), want: "basis=load; tokenizer=none;"},
		{name: "tokenize error", tokens: idTokens{}, req: &Request{Kind: KindCompletion, Model: "m", Prompts: []string{"hi"}}, want: "basis=load; tokenize=error;"},
		{name: "bad token id", tokens: idTokens{}, req: completion([]int{1, -5, 3, 4}), want: "basis=load; tokenize=error;"},
		{name: "shorter than a block", tokens: idTokens{}, req: completion([]int{1, 2}), want: "basis=none; matched=0c+0s/0;"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix, _ := index.New(index.Options{BlockSize: bs})
			tokens := map[string]Tokens{}
			if tt.tokens != nil {
				tokens["m"] = tt.tokens
			}
			s := New(NewPools(pipePools, ""), &Load{}, Options{Index: ix, Tokens: tokens})
			d, err := s.Pick(context.Background(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(d.Reason, tt.want) || d.Basis != BasisNone {
				t.Fatalf("reason %q basis %s, want prefix %q and none", d.Reason, d.Basis, tt.want)
			}
			d.Commit()
			d.Release()
		})
	}
}

func TestPrefillAccounting(t *testing.T) {
	tests := []struct {
		name        string
		stored      int // blocks confirmed on the endpoint
		started     bool
		release     bool
		wantPrefill int64
		wantIn      int64
	}{
		{name: "committed, uncached", stored: 0, wantPrefill: 22, wantIn: 1},
		{name: "committed, partly cached", stored: 3, wantPrefill: 10, wantIn: 1},
		{name: "response started", stored: 3, started: true, wantPrefill: 0, wantIn: 1},
		{name: "released without start", stored: 3, release: true, wantPrefill: 0, wantIn: 0},
		{name: "started and released", stored: 0, started: true, release: true, wantPrefill: 0, wantIn: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPipe(t, ScoringConfig{})
			ids := prompt(9, 5*bs+2)
			ep := "10.0.0.1:8000"
			p.store(t, ep, ids[:tt.stored*bs], index.Identity{Model: "m"})
			req := completion(ids)
			req.Subset = []string{ep}
			d := p.pick(t, req)
			d.Commit()
			if tt.started {
				d.ResponseStarted()
				d.ResponseStarted()
			}
			if tt.release {
				d.Release()
				d.Release()
			}
			if got := p.load.PrefillTokens(ep); got != tt.wantPrefill {
				t.Errorf("prefill tokens = %d, want %d", got, tt.wantPrefill)
			}
			if got := p.load.InFlight(ep); got != tt.wantIn {
				t.Errorf("in flight = %d, want %d", got, tt.wantIn)
			}
		})
	}
}

func TestUsageForwarded(t *testing.T) {
	p := newPipe(t, ScoringConfig{})
	d := p.pick(t, completion(prompt(10, 3*bs)))
	d.Usage(12, 8, true) // before commit: ignored
	d.Commit()
	d.Usage(12, 8, true)
	d.Usage(12, 4, true) // only the first counts
	if want := []int{12, 8}; len(p.pol.usage) != 2 || p.pol.usage[0] != want[0] || p.pol.usage[1] != want[1] {
		t.Fatalf("usage = %v, want %v", p.pol.usage, want)
	}
}

func TestStaticTTL(t *testing.T) {
	tests := []struct {
		name  string
		p     StaticTTL
		ttl   time.Duration
		trust float64
	}{
		{name: "zero value", p: StaticTTL{}, ttl: DefaultTTL, trust: 1},
		{name: "set", p: StaticTTL{D: time.Second}, ttl: time.Second, trust: 1},
		{name: "paused", p: StaticTTL{D: -1}, ttl: 0, trust: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.TTL("e", "m"); got != tt.ttl {
				t.Errorf("TTL = %v, want %v", got, tt.ttl)
			}
			if got := tt.p.Trust("e", "m"); got != tt.trust {
				t.Errorf("Trust = %v, want %v", got, tt.trust)
			}
		})
	}
}

// A pool that discovery creates after New is weighed with the configured
// weights, not zero ones: load still decides.
func TestDiscoveredPoolIsWeighed(t *testing.T) {
	pools := NewPools(pipePools, "")
	load := &Load{}
	s := New(pools, load, Options{})
	pools.AddEndpoint("late", "10.0.5.1:8000")
	pools.AddEndpoint("late", "10.0.5.2:8000")
	load.add("10.0.5.1:8000", 3)
	for range 20 {
		d, err := s.Pick(context.Background(), &Request{Model: "late"})
		if err != nil {
			t.Fatal(err)
		}
		if d.Endpoint != "10.0.5.2:8000" {
			t.Fatalf("picked loaded %s (%s)", d.Endpoint, d.Reason)
		}
	}
}

func TestFailedDecisionWithdrawsItsPredictions(t *testing.T) {
	p := newPipe(t, ScoringConfig{})
	ids := prompt(3, 10*bs)
	p.store(t, "10.0.0.3:8000", ids[:4*bs], index.Identity{Model: "m"})
	d := p.pick(t, completion(ids))
	d.Failed() // before Commit: nothing to withdraw, and no effect later
	d.Commit()
	d.Failed()
	d.Failed()
	d.Release()
	// The prompt's blocks beyond the confirmed four are no longer predicted
	// anywhere, so a follow-up sees only the confirmed prefix.
	d2 := p.pick(t, completion(append(ids, 7, 7)))
	if d2.Basis != BasisConfirmed || !strings.HasPrefix(d2.Reason, "basis=confirmed; matched=4c+0s/10;") {
		t.Fatalf("after a failed request the follow-up is %s (%s), want confirmed 4c+0s", d2.Basis, d2.Reason)
	}
}

// TestServedFallbackMovesTheAccounting: when the proxy reports that a
// fallback served, the request's load and prefill move there and so do its
// predictions (the chosen endpoint never saw the prompt); the chosen
// endpoint itself, or an endpoint the decision never offered, changes
// nothing.
func TestServedFallbackMovesTheAccounting(t *testing.T) {
	tests := []struct {
		name   string
		served func(d *Decision) string
		want   ServedResult
	}{
		{"chosen", func(d *Decision) string { return d.Endpoint }, ServedChosen},
		{"fallback", func(d *Decision) string { return d.Fallbacks[0] }, ServedFallback},
		{"unlisted", func(*Decision) string { return "192.0.2.9:8000" }, ServedUnlisted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPipe(t, ScoringConfig{})
			ids := prompt(5, 10*bs)
			p.store(t, "10.0.0.3:8000", ids[:4*bs], index.Identity{Model: "m"})
			d := p.pick(t, completion(ids))
			if len(d.Fallbacks) != 1 {
				t.Fatalf("fallbacks %v, want one", d.Fallbacks)
			}
			if got := d.Served(d.Fallbacks[0]); got != ServedChosen {
				t.Fatalf("Served before Commit = %v, want chosen (no effect)", got)
			}
			d.Commit()
			chosen, served := d.Endpoint, tt.served(d)
			if got := d.Served(served); got != tt.want {
				t.Fatalf("Served(%s) = %v, want %v", served, got, tt.want)
			}
			holder := chosen
			if tt.want == ServedFallback {
				holder = served
				if got := p.load.InFlight(chosen); got != 0 {
					t.Errorf("chosen in flight %d after the move, want 0", got)
				}
				if n := p.ix.EndpointEntries(chosen).Speculative; n != 0 {
					t.Errorf("chosen keeps %d predictions, want 0", n)
				}
			}
			if got := p.load.InFlight(holder); got != 1 {
				t.Errorf("%s in flight %d, want 1", holder, got)
			}
			if p.load.PrefillTokens(holder) <= 0 {
				t.Errorf("%s has no queued prefill", holder)
			}
			n := p.ix.EndpointEntries(holder).Speculative
			if n == 0 {
				t.Errorf("%s holds no predictions", holder)
			}
			// The TTL policy follows the route on the endpoint that served.
			var wantMoved []string
			if tt.want == ServedFallback {
				wantMoved = []string{served}
				if r := p.pol.moved[0]; r.NewSpeculative != n || r.Model != "m" || r.MatchedSpeculative != 0 {
					t.Errorf("moved route %+v, want %d new predictions of model m and no claimed match", r, n)
				}
			}
			var gotMoved []string
			for _, r := range p.pol.moved {
				gotMoved = append(gotMoved, r.Endpoint)
			}
			if !slices.Equal(gotMoved, wantMoved) {
				t.Errorf("TTL policy told of moves to %v, want %v", gotMoved, wantMoved)
			}
			d.Release()
			for _, ep := range []string{chosen, served} {
				if got, pre := p.load.InFlight(ep), p.load.PrefillTokens(ep); got != 0 || pre != 0 {
					t.Errorf("%s after Release: in flight %d, prefill %d; want 0, 0", ep, got, pre)
				}
			}
		})
	}
}
