package scorer

import (
	"context"
	"fmt"
	"strconv"
	"sync"
)

// Prefill/decode (P/D) disaggregation. In a pool with prefill-only
// endpoints a request runs in two places: a prefiller computes the prompt's
// KV state, and a decoder pulls that state and streams the answer (llm-d's
// routing sidecar next to the decoder sends the prefill, named by the
// x-prefiller-host-port header, before decoding). The prefiller's cache is
// the one that holds the prompt afterwards and publishes its blocks, so the
// prefix decision (tokens, lookup, prefix and load scores, predictions, the
// TTL clock) is made among the endpoints that may prefill; the decoder, which
// reuses nothing of its own, is chosen by load among those that may decode.

// PD placements, a bounded set used as a metric label.
const (
	// pdDisaggregated: a prefiller and a different decoder.
	pdDisaggregated = "disaggregated"
	// pdAggregated: the chosen prefiller also decodes (role both), so the
	// request runs whole there and no KV state moves.
	pdAggregated = "aggregated"
	// pdNoPrefill: no live endpoint may prefill; the decoder prefills
	// itself, chosen like any pool's endpoint.
	pdNoPrefill = "no_prefill"
)

// splitRoles returns the candidates that may prefill and those that may
// decode, in candidate order.
func splitRoles(candidates []string, roles map[string]Role) (prefill, decode []string) {
	for _, ep := range candidates {
		r := roles[ep]
		if r.prefills() {
			prefill = append(prefill, ep)
		}
		if r.decodes() {
			decode = append(decode, ep)
		}
	}
	return prefill, decode
}

// pdSplit is a P/D pool's candidates split by role. The last one is kept
// while the candidates are the same snapshot (the common case: every
// endpoint live and no subset hint), so the prefill and decode sets keep
// their identity and their load counters stay resolved between decisions.
// Immutable but for decodeRefs; safe for concurrent use.
type pdSplit struct {
	candidates      []string
	roles           *poolRoles
	prefill, decode []string
	decodeRefs      sync.Pool // *loadRefs over decode
}

// splitOf returns candidates split by pl's roles, reusing the last split
// of the same snapshots.
func (pl *pool) splitOf(candidates []string) *pdSplit {
	rp := pl.roles.Load()
	if sp := pl.split.Load(); sp != nil && sp.roles == rp && sameSnapshot(sp.candidates, candidates) {
		return sp
	}
	var roles map[string]Role
	if rp != nil {
		roles = rp.m
	}
	sp := &pdSplit{candidates: candidates, roles: rp}
	sp.prefill, sp.decode = splitRoles(candidates, roles)
	pl.split.Store(sp)
	return sp
}

// pickPD decides for a P/D pool: the prefiller by prefix and load among the
// candidates that may prefill, then the decoder by load among those that may
// decode. The decision's Endpoint (and Fallbacks) are decoders; Prefiller,
// Match and Basis, and the predictions Commit inserts, are the prefiller's.
func (s *Scorer) pickPD(ctx context.Context, pl *pool, req *Request, candidates []string, roles map[string]Role) (*Decision, error) {
	split := pl.splitOf(candidates)
	prefill, decode := split.prefill, split.decode
	if len(decode) == 0 {
		return nil, fmt.Errorf("pool %q: none of %d live candidates may decode: %w", pl.name, len(candidates), ErrNoEndpoint)
	}
	w := s.scratch.Get().(*work)
	defer s.putWork(w)
	if len(prefill) == 0 {
		d, note := s.prepare(ctx, w, pl, req, decode)
		s.decide(w, pl, decode, d, note)
		d.Reason = "pd=" + pdNoPrefill + "; " + d.Reason
		s.opts.Metrics.pdDecision(pdNoPrefill, d.Endpoint, d.Endpoint)
		return d, nil
	}
	d, note := s.prepare(ctx, w, pl, req, prefill)
	s.decide(w, pl, prefill, d, note)
	if roles[d.Endpoint].decodes() {
		d.Reason = "pd=" + pdAggregated + "; " + d.Reason
		s.opts.Metrics.pdDecision(pdAggregated, d.Endpoint, d.Endpoint)
		return d, nil
	}
	d.Prefiller = d.Endpoint
	s.pickDecoder(w, pl, split, d)
	s.opts.Metrics.pdDecision(pdDisaggregated, d.Prefiller, d.Endpoint)
	return d, nil
}

// pickDecoder sets d's Endpoint and Fallbacks to the decode candidates
// best by load (router-tracked and engine gauges, no prefix: a decoder
// reuses the prefiller's KV state, not its own), and appends the decode
// part to d's reason.
func (s *Scorer) pickDecoder(w *work, pl *pool, split *pdSplit, d *Decision) {
	f := &w.field
	decode := split.decode
	refs, _ := split.decodeRefs.Get().(*loadRefs)
	if refs == nil {
		refs = new(loadRefs)
	}
	f.endpoints, f.blocks = decode, 0
	f.loads = s.load.readCached(decode, refs, f.loads)
	split.decodeRefs.Put(refs)
	w.combiner = combiner{w: s.weightsOf(pl), engine: s.opts.EngineLoad, part: w.part, total: w.total}
	total := w.combine(f)
	best, fb, ties := choose(total, w.w.epsilon, s.opts.Fallbacks, w.fallbacks)
	w.fallbacks = fb
	d.Endpoint = decode[best]
	d.Fallbacks = make([]string, 0, len(fb))
	for _, j := range fb {
		d.Fallbacks = append(d.Fallbacks, decode[j])
	}
	// The prefill part keeps its usual fields (endpoint= is the prefiller);
	// the decode part follows under decoder names.
	b := append([]byte("pd="+pdDisaggregated+"; "), d.Reason...)
	b = append(b, "; decoder="...)
	b = append(b, d.Endpoint...)
	b = append(b, "; decoder_inflight="...)
	b = strconv.AppendInt(b, f.loads[best].inflight, 10)
	b = append(b, "; decoder_candidates="...)
	b = strconv.AppendInt(b, int64(len(decode)), 10)
	b = append(b, "; decoder_because=least loaded"...)
	if ties > 1 {
		b = strconv.AppendInt(append(b, ", random among "...), int64(ties), 10)
	}
	d.Reason = string(b)
}

// prefillAt is the endpoint that prefills for d: its prefiller when
// disaggregated, else the endpoint holding its accounting. Its cache is the
// one the prompt's blocks land in, so predictions and the TTL clock go there.
func (d *Decision) prefillAt() string {
	if d.Prefiller != "" {
		return d.Prefiller
	}
	return d.target()
}

// prefillerLoad counts the request in flight on its prefiller (delta 1 at
// Commit, -1 once the decoder's response starts, which needs the prefill
// done); a no-op when the decision is not disaggregated.
func (d *Decision) prefillerLoad(delta int64) {
	if d.Prefiller != "" {
		d.s.load.add(d.Prefiller, delta)
	}
}

// pickAffinityPD routes a previous_response_id request by affinity among
// the candidates that may decode: in a P/D pool the response was stored by
// a decoder, and a prefill-only endpoint never answers a client.
func (s *Scorer) pickAffinityPD(pl *pool, req *Request, candidates []string) (*Decision, error) {
	dec := decoders(pl, candidates)
	if len(dec) == 0 {
		return nil, fmt.Errorf("pool %q: none of %d live candidates may decode: %w", pl.name, len(candidates), ErrNoEndpoint)
	}
	return s.pickByAffinity(pl, req, dec)
}

// decoders returns the candidates that may be a request's destination: in
// a P/D pool those that may decode, else all of them. A request that keeps
// its affinity (previous_response_id) goes whole to one of these.
func decoders(pl *pool, candidates []string) []string {
	roles := pl.pdRoles()
	if roles == nil {
		return candidates
	}
	_, decode := splitRoles(candidates, roles)
	return decode
}
