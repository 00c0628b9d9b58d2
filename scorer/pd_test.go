package scorer

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/warmroute/warmroute/index"
)

const (
	pre1, pre2 = "10.0.1.1:8000", "10.0.1.2:8000"
	dec1, dec2 = "10.0.2.1:8000", "10.0.2.2:8000"
	both1      = "10.0.3.1:8000"
)

// newPDPipe is a pipe over one P/D pool: two prefillers, two decoders and
// the extra endpoints given with their roles.
func newPDPipe(t *testing.T, extra map[string]Role) (*pipe, *Metrics) {
	t.Helper()
	ix, err := index.New(index.Options{BlockSize: bs})
	if err != nil {
		t.Fatal(err)
	}
	roles := map[string]Role{pre1: RolePrefill, pre2: RolePrefill, dec1: RoleDecode, dec2: RoleDecode}
	eps := []string{pre1, pre2, dec1, dec2}
	for ep, r := range extra {
		roles[ep] = r
		eps = append(eps, ep)
	}
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	p := &pipe{ix: ix, load: &Load{}, pol: &policy{ttl: time.Minute, trust: 1}}
	p.s = New(NewPools([]PoolConfig{{Name: "m", Endpoints: eps, Roles: roles}}, ""), p.load, Options{
		Index: ix, Tokens: map[string]Tokens{"m": idTokens{}}, TTL: p.pol, Fallbacks: 1, Metrics: m,
	})
	return p, m
}

func isDecoder(ep string) bool { return ep == dec1 || ep == dec2 }

// TestPDPrefillFollowsPrefix: the prefiller is the prefill endpoint holding
// the prefix, the destination a decoder; the predictions and the TTL clock
// are the prefiller's, and the decoder gets none.
func TestPDPrefillFollowsPrefix(t *testing.T) {
	p, m := newPDPipe(t, nil)
	ids := prompt(1, 10*bs)
	p.store(t, pre2, ids[:4*bs], index.Identity{Model: "m"})
	d := p.pick(t, completion(ids))
	if d.Prefiller != pre2 || !isDecoder(d.Endpoint) || d.Basis != BasisConfirmed || d.Match.Confirmed != 4 {
		t.Fatalf("prefiller %q endpoint %q basis %s match %+v, want prefiller %s, a decoder, 4 confirmed (%s)",
			d.Prefiller, d.Endpoint, d.Basis, d.Match, pre2, d.Reason)
	}
	if len(d.Fallbacks) != 1 || !isDecoder(d.Fallbacks[0]) || d.Fallbacks[0] == d.Endpoint {
		t.Fatalf("fallbacks %v, want the other decoder", d.Fallbacks)
	}
	if !strings.HasPrefix(d.Reason, "pd=disaggregated; basis=confirmed; matched=4c+0s/10; endpoint="+pre2) ||
		!strings.Contains(d.Reason, "; decoder="+d.Endpoint+"; decoder_inflight=0; decoder_candidates=2; decoder_because=least loaded") {
		t.Fatalf("reason %q", d.Reason)
	}
	d.Commit()
	if r := p.pol.began[0]; r.Endpoint != pre2 || r.MatchedConfirmed != 4 || r.NewSpeculative != 6 {
		t.Fatalf("route %+v, want the prefiller's with 4 confirmed and 6 new predictions", r)
	}
	if got := p.ix.EndpointEntries(pre2).Speculative; got != 6 {
		t.Errorf("prefiller holds %d predictions, want 6", got)
	}
	if got := p.ix.EndpointEntries(d.Endpoint).Speculative; got != 0 {
		t.Errorf("decoder holds %d predictions, want none", got)
	}
	if got := testutil.ToFloat64(m.pd.decisions.WithLabelValues(pdDisaggregated)); got != 1 {
		t.Errorf("disaggregated decisions = %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.pd.picks.WithLabelValues("prefill", pre2)); got != 1 {
		t.Errorf("prefill picks of %s = %v, want 1", pre2, got)
	}
	// The follow-up prefills where the prediction is.
	d2 := p.pick(t, completion(append(ids, 9, 9)))
	if d2.Prefiller != pre2 || d2.Basis != BasisSpeculative || d2.Match.Speculative != 6 {
		t.Fatalf("follow-up prefiller %q basis %s match %+v, want %s speculative 6 (%s)", d2.Prefiller, d2.Basis, d2.Match, pre2, d2.Reason)
	}
}

// TestPDLoadAccounting: the decoder carries the request until it ends; the
// prefiller carries it and its prefill tokens until the response starts.
func TestPDLoadAccounting(t *testing.T) {
	p, _ := newPDPipe(t, nil)
	d := p.pick(t, completion(prompt(2, 5*bs)))
	d.Commit()
	if p.load.InFlight(d.Endpoint) != 1 || p.load.InFlight(d.Prefiller) != 1 || p.load.PrefillTokens(d.Prefiller) != 5*bs {
		t.Fatalf("after commit: decoder %d in flight, prefiller %d in flight %d prefill tokens",
			p.load.InFlight(d.Endpoint), p.load.InFlight(d.Prefiller), p.load.PrefillTokens(d.Prefiller))
	}
	if p.load.PrefillTokens(d.Endpoint) != 0 {
		t.Errorf("decoder has %d prefill tokens, want 0: it prefills nothing", p.load.PrefillTokens(d.Endpoint))
	}
	d.ResponseStarted()
	if p.load.InFlight(d.Prefiller) != 0 || p.load.PrefillTokens(d.Prefiller) != 0 || p.load.InFlight(d.Endpoint) != 1 {
		t.Fatalf("after the response started: prefiller %d/%d, decoder %d", p.load.InFlight(d.Prefiller), p.load.PrefillTokens(d.Prefiller), p.load.InFlight(d.Endpoint))
	}
	d.Release()
	if p.load.InFlight(d.Endpoint) != 0 {
		t.Fatalf("decoder in flight %d after release", p.load.InFlight(d.Endpoint))
	}
}

// TestPDDecodeSpreadsByLoad: with one decoder busy, the next request's
// decoder is the other, whatever the prefix.
func TestPDDecodeSpreadsByLoad(t *testing.T) {
	p, _ := newPDPipe(t, nil)
	ids := prompt(3, 6*bs)
	first := p.pick(t, completion(ids))
	first.Commit()
	first.ResponseStarted()
	for range 10 {
		d := p.pick(t, completion(ids))
		if d.Endpoint == first.Endpoint || d.Prefiller != first.Prefiller {
			t.Fatalf("decoder %s (busy: %s), prefiller %s (warm: %s)", d.Endpoint, first.Endpoint, d.Prefiller, first.Prefiller)
		}
	}
}

// TestPDCandidates: which endpoints may take which part, by the live
// candidates.
func TestPDCandidates(t *testing.T) {
	tests := []struct {
		name          string
		extra         map[string]Role
		subset        []string
		warm          string
		wantPrefiller string // "*" any prefiller
		wantEndpoint  string // "dec": a decoder
		wantPlacement string
		wantErr       error
	}{
		{name: "warm prefiller down: the other prefills", subset: []string{pre1, dec1, dec2}, warm: pre2,
			wantPrefiller: pre1, wantEndpoint: "dec", wantPlacement: pdDisaggregated},
		{name: "no prefiller left: a decoder prefills itself", subset: []string{dec1, dec2}, warm: dec2,
			wantEndpoint: dec2, wantPlacement: pdNoPrefill},
		{name: "no decoder left", subset: []string{pre1, pre2}, wantErr: ErrNoEndpoint},
		{name: "a warm both-role endpoint runs the whole request", extra: map[string]Role{both1: RoleBoth}, warm: both1,
			wantEndpoint: both1, wantPlacement: pdAggregated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, m := newPDPipe(t, tt.extra)
			ids := prompt(4, 8*bs)
			if tt.warm != "" {
				p.store(t, tt.warm, ids[:6*bs], index.Identity{Model: "m"})
			}
			req := completion(ids)
			req.Subset = tt.subset
			d, err := p.s.Pick(context.Background(), req)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Pick error %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if tt.wantPrefiller != d.Prefiller {
				t.Errorf("prefiller %q, want %q (%s)", d.Prefiller, tt.wantPrefiller, d.Reason)
			}
			if tt.wantEndpoint == "dec" && !isDecoder(d.Endpoint) || tt.wantEndpoint != "dec" && d.Endpoint != tt.wantEndpoint {
				t.Errorf("endpoint %q, want %s (%s)", d.Endpoint, tt.wantEndpoint, d.Reason)
			}
			if !strings.HasPrefix(d.Reason, "pd="+tt.wantPlacement+";") {
				t.Errorf("reason %q, want placement %s", d.Reason, tt.wantPlacement)
			}
			if got := testutil.ToFloat64(m.pd.decisions.WithLabelValues(tt.wantPlacement)); got != 1 {
				t.Errorf("%s decisions = %v, want 1", tt.wantPlacement, got)
			}
			d.Commit()
			if r := p.pol.began[0]; r.Endpoint != d.prefillAt() || r.Endpoint == "" {
				t.Errorf("TTL clock on %q, want the prefilling endpoint %q", r.Endpoint, d.prefillAt())
			}
		})
	}
}

// TestPDFailedAndServed: a failed request withdraws the prefiller's
// predictions; a fallback decoder serving leaves them there.
func TestPDFailedAndServed(t *testing.T) {
	p, _ := newPDPipe(t, nil)
	d := p.pick(t, completion(prompt(5, 5*bs)))
	d.Commit()
	if got := d.Served(d.Fallbacks[0]); got != ServedFallback {
		t.Fatalf("Served = %v, want fallback", got)
	}
	if n := p.ix.EndpointEntries(d.Prefiller).Speculative; n != 5 {
		t.Fatalf("prefiller keeps %d predictions after a fallback decoder served, want 5", n)
	}
	if n := p.ix.EndpointEntries(d.Fallbacks[0]).Speculative; n != 0 {
		t.Fatalf("fallback decoder got %d predictions, want none", n)
	}
	d.Failed()
	if n := p.ix.EndpointEntries(d.Prefiller).Speculative; n != 0 {
		t.Fatalf("prefiller keeps %d predictions of a failed request", n)
	}
	d.Release()
	for _, ep := range []string{d.Endpoint, d.Fallbacks[0], d.Prefiller} {
		if p.load.InFlight(ep) != 0 || p.load.PrefillTokens(ep) != 0 {
			t.Errorf("%s left with %d in flight, %d prefill tokens", ep, p.load.InFlight(ep), p.load.PrefillTokens(ep))
		}
	}
}

// TestPDOnlyWithPrefillOnlyEndpoints: decode-only endpoints alone do not
// make a P/D pool, and SetRoles turns one into a P/D pool at run time.
func TestPDOnlyWithPrefillOnlyEndpoints(t *testing.T) {
	pools := NewPools([]PoolConfig{{Name: "m", Endpoints: []string{pre1, dec1}, Roles: map[string]Role{dec1: RoleDecode}}}, "")
	s := New(pools, &Load{}, Options{})
	d, err := s.Pick(context.Background(), completion(prompt(6, 2*bs)))
	if err != nil || d.Prefiller != "" || strings.HasPrefix(d.Reason, "pd=") {
		t.Fatalf("decision %+v, %v: want an ordinary one", d, err)
	}
	pools.SetRoles("m", map[string]Role{pre1: RolePrefill, dec1: RoleDecode})
	d, err = s.Pick(context.Background(), completion(prompt(6, 2*bs)))
	if err != nil || d.Prefiller != pre1 || d.Endpoint != dec1 {
		t.Fatalf("after SetRoles: prefiller %q endpoint %q, %v; want %s then %s", d.Prefiller, d.Endpoint, err, pre1, dec1)
	}
	if got := pools.Roles("m"); len(got) != 2 || got[pre1] != RolePrefill {
		t.Fatalf("Roles = %v", got)
	}
}

// TestPDAffinityDecoders: a previous_response_id request in a P/D pool goes
// whole to a decoder, never to a prefill-only endpoint.
func TestPDAffinityDecoders(t *testing.T) {
	p, _ := newPDPipe(t, nil)
	for range 20 {
		req := completion(prompt(7, 3*bs))
		req.PreviousResponseID = "resp_1"
		d := p.pick(t, req)
		if !isDecoder(d.Endpoint) || d.Prefiller != "" {
			t.Fatalf("affinity request to %s (prefiller %q), want a decoder alone", d.Endpoint, d.Prefiller)
		}
	}
	req := completion(prompt(7, 3*bs))
	req.PreviousResponseID, req.Subset = "resp_1", []string{pre1}
	if _, err := p.s.Pick(context.Background(), req); !errors.Is(err, ErrNoEndpoint) {
		t.Fatalf("with only a prefiller left: %v, want ErrNoEndpoint", err)
	}
}

// TestPDSplitFollowsCandidates: the kept split is reused only for the same
// candidates and roles; a subset hint or new roles split afresh.
func TestPDSplitFollowsCandidates(t *testing.T) {
	p, _ := newPDPipe(t, nil)
	ids := prompt(8, 3*bs)
	for _, tt := range []struct {
		subset         []string
		pre, dec       string // "" any
		setPrefillOnly string
	}{
		{}, {subset: []string{pre1, dec2}, pre: pre1, dec: dec2}, {},
		{subset: []string{pre2, dec1}, pre: pre2, dec: dec1},
		{setPrefillOnly: dec1, pre: dec1 + "|" + pre1 + "|" + pre2, dec: dec2},
	} {
		if tt.setPrefillOnly != "" {
			p.s.pools.SetRoles("m", map[string]Role{pre1: RolePrefill, pre2: RolePrefill, dec1: RolePrefill, dec2: RoleDecode})
		}
		req := completion(ids)
		req.Subset = tt.subset
		d := p.pick(t, req)
		if tt.pre != "" && !strings.Contains(tt.pre, d.Prefiller) || d.Prefiller == "" {
			t.Fatalf("subset %v: prefiller %q, want %s", tt.subset, d.Prefiller, tt.pre)
		}
		if tt.dec != "" && d.Endpoint != tt.dec || !isDecoder(d.Endpoint) {
			t.Fatalf("subset %v: decoder %q, want %s", tt.subset, d.Endpoint, tt.dec)
		}
	}
}

// TestPDConcurrent: decisions race role changes and each other (run with
// -race); every decision stays well formed.
func TestPDConcurrent(t *testing.T) {
	p, _ := newPDPipe(t, nil)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				if g == 0 && i%20 == 0 {
					p.s.pools.SetRoles("m", map[string]Role{pre1: RolePrefill, pre2: RolePrefill, dec1: RoleDecode, dec2: RoleDecode})
				}
				d, err := p.s.Pick(context.Background(), completion(prompt(9+i%5, 4*bs)))
				if err != nil || d.Prefiller == "" || !isDecoder(d.Endpoint) {
					t.Errorf("decision %+v, %v", d, err)
					return
				}
				d.Commit()
				d.ResponseStarted()
				d.Release()
			}
		})
	}
	wg.Wait()
	for _, ep := range []string{pre1, pre2, dec1, dec2} {
		if p.load.InFlight(ep) != 0 || p.load.PrefillTokens(ep) != 0 {
			t.Errorf("%s left with load %d/%d", ep, p.load.InFlight(ep), p.load.PrefillTokens(ep))
		}
	}
}
