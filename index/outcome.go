package index

import "time"

// DecisionID names the routing decision that created speculative entries, so a
// later confirmation can be traced back to it. The router assigns it; zero is a
// valid id.
type DecisionID uint64

// OutcomeKind is how a speculative entry ended: its ending. Its names are the
// one vocabulary of endings, used by index/ttl and by every metric label
// that counts endings.
type OutcomeKind uint8

// Outcome kinds. Every speculative entry ends in exactly one of them.
const (
	// Confirmed: a Store for the endpoint arrived before the entry expired.
	Confirmed OutcomeKind = iota
	// EarlyExpiry: the Store arrived after expiry but within Options.Grace,
	// meaning the TTL expired early: it was shorter than the real event path.
	EarlyExpiry
	// StaleExpiry: the entry expired and no Store arrived within the grace window
	// (a failed prediction, a lost event or a key disagreement), or its
	// request failed and Withdraw ended it at once.
	StaleExpiry
	// Dropped: the entry was removed before it could end otherwise, because
	// its endpoint was cleared or its key evicted under the memory bound.
	Dropped
)

// String names the kind for logs and metric labels (a bounded set).
func (k OutcomeKind) String() string {
	switch k {
	case Confirmed:
		return "confirmed"
	case EarlyExpiry:
		return "early_expiry"
	case StaleExpiry:
		return "stale_expiry"
	}
	return "dropped"
}

// Outcome reports how the speculative entries of one decision on one endpoint
// ended during one index call. A decision's blocks may end over several calls
// (chunked prefill stores a long prompt over several engine steps), so one
// decision can produce several outcomes.
type Outcome struct {
	Kind     OutcomeKind
	Endpoint string
	Decision DecisionID
	// Blocks is how many of the decision's entries ended this way in the call.
	Blocks int
	// Latency is the time from the decision (the Speculate call) to this end:
	// the route-to-confirmation latency for Confirmed and EarlyExpiry.
	Latency time.Duration
	// Remote is set when another router replica made the prediction
	// (SpeculateRemote). Its decision was never begun here, so a per-replica
	// lifecycle account must not count it as its own; Decision is then the
	// other replica's id and may equal a local one.
	Remote bool
}

// Observer receives outcomes. Observe is called on the goroutine that made the
// index call, after every index lock is released; it must not block, because
// that goroutine is usually the event consumer. An implementation that needs
// to do slow work should hand outcomes to a buffered channel and count what it
// drops.
type Observer interface {
	Observe(Outcome)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(Outcome)

// Observe calls f(o).
func (f ObserverFunc) Observe(o Outcome) { f(o) }
