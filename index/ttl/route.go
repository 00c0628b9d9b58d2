package ttl

import "time"

// Route describes a committed routing decision, as the scorer reports it to
// Begin.
type Route struct {
	Endpoint, Model string
	// PromptTokens is the prompt's length in tokens.
	PromptTokens int
	// MatchedConfirmed and MatchedSpeculative split the chosen endpoint's
	// leading run of held blocks; MatchedSpeculative > 0 means the route
	// relied on a prediction.
	MatchedConfirmed, MatchedSpeculative int
	// NewSpeculative is how many entries Speculate created for the decision.
	NewSpeculative int
	BlockSize      int
	// At is when the decision was committed (the Speculate call).
	At time.Time
}

// promptClass buckets prompt length into a small fixed set, so latency can be
// told apart by request shape (long prompts store their last blocks later,
// after more prefill chunks) without an unbounded label.
type promptClass uint8

const (
	classLT1K promptClass = iota
	classLT4K
	classLT16K
	classGE16K
	numClasses
)

var classNames = [numClasses]string{"lt1k", "lt4k", "lt16k", "ge16k"}

func classOf(promptTokens int) promptClass {
	switch {
	case promptTokens < 1024:
		return classLT1K
	case promptTokens < 4096:
		return classLT4K
	case promptTokens < 16384:
		return classLT16K
	}
	return classGE16K
}

func (c promptClass) String() string { return classNames[c] }

// speculativeResult is whether a route that used a prediction found the
// predicted blocks cached on the engine.
type speculativeResult uint8

const (
	resultHit speculativeResult = iota
	resultMiss
	resultUnknown
	numResults
)

var resultNames = [numResults]string{"hit", "miss", "unknown"}

// judgeUsage compares the engine's cached tokens with what the route
// expected. The engine caches only full blocks and never the prompt's last
// token, so the expectation is capped at the last full block before it. A hit
// means every predicted block was cached; a miss reports the predicted tokens
// that had to be prefilled anyway (the cost of a false warm route), not
// counting confirmed blocks that were also missing, which are no fault of
// speculation.
func judgeUsage(r *Route, promptTokens, cachedTokens int, known bool) (speculativeResult, int) {
	if !known || r.BlockSize <= 0 {
		return resultUnknown, 0
	}
	if promptTokens <= 0 {
		promptTokens = r.PromptTokens
	}
	cacheable := max(promptTokens-1, 0) / r.BlockSize * r.BlockSize
	confirmed := min(r.MatchedConfirmed*r.BlockSize, cacheable)
	expected := min((r.MatchedConfirmed+r.MatchedSpeculative)*r.BlockSize, cacheable)
	if expected <= confirmed {
		return resultUnknown, 0 // no predicted block lies in the cacheable part
	}
	if cachedTokens >= expected {
		return resultHit, 0
	}
	return resultMiss, expected - max(cachedTokens, confirmed)
}
