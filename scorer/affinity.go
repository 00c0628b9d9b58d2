package scorer

import (
	"errors"
	"fmt"

	"github.com/warmroute/warmroute/index"
)

// Response-id affinity. vLLM keeps a stored Responses response (store true,
// with VLLM_ENABLE_RESPONSES_API_STORE on) in the memory of the serving
// process that produced it, and a request naming it as previous_response_id
// must reach that process: any other answers 404. Such a request carries only
// its new turn (the engine prepends the stored conversation), so its rendered
// prompt says nothing about the cache and it is never routed on prefix.

// AffinityResult is what an Affinity knew of a previous_response_id. It is a
// metric label; the set is fixed.
type AffinityResult uint8

// Affinity results.
const (
	// AffinityHit: the id is known and its endpoint is a live candidate.
	AffinityHit AffinityResult = iota
	// AffinityEndpointDown: the id is known but its endpoint is down or no
	// longer a candidate; the stored response is gone with it.
	AffinityEndpointDown
	// AffinityUnknown: the id is not known although every response stored
	// within the retention window is (the table is complete): it does not
	// exist, as far as any engine is concerned.
	AffinityUnknown
	// AffinityUnsure: the id is not known and the table may be missing
	// entries (the router started, or evicted for room, within the
	// window): the request is routed on load and the engine answers.
	AffinityUnsure
)

// String names the result for metric labels.
func (r AffinityResult) String() string {
	switch r {
	case AffinityHit:
		return "hit"
	case AffinityEndpointDown:
		return "endpoint_down"
	case AffinityUnknown:
		return "unknown"
	}
	return "unsure"
}

// Affinity maps stored response ids to the endpoints that hold them, per
// pool. Implementations are safe for concurrent use and quick.
type Affinity interface {
	// Lookup finds id in pool and judges it against the live candidates.
	Lookup(pool, id string, candidates []string) (endpoint string, r AffinityResult)
	// Stored records that endpoint stored the response id.
	Stored(pool, id, endpoint string)
}

// ErrResponseNotFound means a request's previous_response_id names no
// stored response the router can reach; the client sees vLLM's own 404.
var ErrResponseNotFound = errors.New("previous response not found")

// ResponseNotFoundError carries the id, for the error body.
type ResponseNotFoundError struct {
	ID string
	// EndpointDown is set when the response was stored by an endpoint that
	// is now down.
	EndpointDown bool
}

func (e *ResponseNotFoundError) Error() string {
	if e.EndpointDown {
		return fmt.Sprintf("Response with id '%s' not found (the engine that stored it is down).", e.ID)
	}
	return fmt.Sprintf("Response with id '%s' not found.", e.ID)
}

func (e *ResponseNotFoundError) Unwrap() error { return ErrResponseNotFound }

// pickByAffinity decides a request that names a previous response: its
// storing endpoint when known and live, a not-found error when the response
// cannot be reached, else load alone.
func (s *Scorer) pickByAffinity(pl *pool, req *Request, candidates []string) (*Decision, error) {
	d := newDecision(0)
	d.Pool, d.model, d.s, d.ID = pl.name, pl.name, s, index.DecisionID(s.nextID.Add(1))
	note := "previous_response=" + AffinityUnsure.String()
	if s.opts.Affinity != nil {
		ep, r := s.opts.Affinity.Lookup(pl.name, req.PreviousResponseID, candidates)
		switch r {
		case AffinityHit:
			d.Endpoint, d.Fallbacks = ep, d.inlineFallbacks[:0]
			d.Reason = "previous_response=hit"
			s.opts.Metrics.decision(d.Basis)
			return d, nil
		case AffinityEndpointDown, AffinityUnknown:
			return nil, &ResponseNotFoundError{ID: req.PreviousResponseID, EndpointDown: r == AffinityEndpointDown}
		}
	}
	w := s.scratch.Get().(*work)
	defer s.scratch.Put(w)
	s.decide(w, pl, candidates, d, note)
	return d, nil
}

// ResponseStored tells the scorer's Affinity that the decision's endpoint
// stored the Responses response id. A no-op without one.
func (d *Decision) ResponseStored(id string) {
	if d == nil {
		return
	}
	d.live()
	if d.s == nil || d.s.opts.Affinity == nil || id == "" {
		return
	}
	d.s.opts.Affinity.Stored(d.Pool, id, d.Endpoint)
}
