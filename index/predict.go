package index

import (
	"fmt"
	"time"
)

// Prediction is one routing decision's claim that Endpoint will soon hold
// Keys, with the absolute times the deciding router used, so that every
// router replica applying it expires it at the same moment.
type Prediction struct {
	// Endpoint is the chosen "ip:port".
	Endpoint string
	// Model names the pool the decision was for. The index does not use it
	// (the keys already carry the identity); it lets a transport filter by
	// model.
	Model string
	// Keys are the predicted blocks, the router's own keys (never engine
	// hashes). They are as sensitive as the prompt's prefix: never log them
	// above debug.
	Keys     []Key
	Decision DecisionID
	// DecidedAt is when the decision was committed; ExpiresAt is when its
	// entries stop matching.
	DecidedAt, ExpiresAt time.Time
}

// Now reads the index's clock (Options.Now), so a caller can stamp a
// Prediction consistently with the index's expiry.
func (ix *Index) Now() time.Time { return ix.opts.Now() }

// SpeculateAt inserts this router's own prediction p with its given times,
// like Speculate with ttl = ExpiresAt - DecidedAt. A caller that shares p
// with other replicas uses it so that all of them hold the same expiry.
func (ix *Index) SpeculateAt(p Prediction) (int, error) {
	return ix.speculate(p.Endpoint, p.Keys, p.Decision, p.DecidedAt.UnixNano(), p.ExpiresAt.UnixNano(), false)
}

// SpeculateRemote applies another router replica's prediction p. Its entries
// match in Lookup like local ones and are confirmed by Store alike, but their
// outcomes carry Outcome.Remote and are counted apart (Stats.RemoteOutcomes),
// because this router never began that decision. The caller bounds
// ExpiresAt (clock skew); a prediction already expired by the index's clock
// is ignored, so it cannot end as stale here. A DecidedAt ahead of the
// index's clock is taken as now, so latencies are never negative.
func (ix *Index) SpeculateRemote(p Prediction) (int, error) {
	now := ix.now()
	expires := p.ExpiresAt.UnixNano()
	if p.Endpoint == "" {
		return 0, fmt.Errorf("applying remote prediction of %d keys: %w", len(p.Keys), ErrEndpoint)
	}
	if expires <= now {
		return 0, nil
	}
	return ix.speculate(p.Endpoint, p.Keys, p.Decision, min(p.DecidedAt.UnixNano(), now), expires, true)
}
