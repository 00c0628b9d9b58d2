package scorer

import (
	"slices"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/warmroute/warmroute/index"
)

// Basis is what the chosen endpoint's cached prefix rested on.
type Basis uint8

// Bases, a bounded set used as a metric label.
const (
	// BasisNone: no cached prefix was known for the chosen endpoint.
	BasisNone Basis = iota
	// BasisConfirmed: the endpoint's leading run was all confirmed by events.
	BasisConfirmed
	// BasisSpeculative: the run included predicted blocks.
	BasisSpeculative
)

// String names the basis for logs and metric labels.
func (b Basis) String() string {
	switch b {
	case BasisConfirmed:
		return "confirmed"
	case BasisSpeculative:
		return "speculative"
	}
	return "none"
}

func basisOf(m index.Match) Basis {
	switch {
	case m.Speculative > 0:
		return BasisSpeculative
	case m.Confirmed > 0:
		return BasisConfirmed
	}
	return BasisNone
}

// Decision is the outcome of Pick for one request. Commit it once Envoy has
// been told where to send the request; Release it when the request ends. A
// decision that is never committed (abandoned) costs nothing.
//
// Commit, ResponseStarted, Usage, Failed and Release may be called from any
// goroutine; each takes effect at most once.
//
// Done ends the decision's use, once nothing will call or read it any more
// (after the outcome: Failed, Usage, Release): the scorer then reuses its
// memory, keys, Fallbacks and Reason included, for a later Pick, so a
// steady-state decision allocates nothing. Every method panics after Done;
// Reason, Fallbacks and the other fields read as poison until the memory is
// reused, so copy what must outlive it. Calling Done is optional: a
// decision never ended with it is garbage collected.
type Decision struct {
	// Pool names the pool the endpoint came from.
	Pool string
	// Endpoint is the chosen "ip:port".
	Endpoint string
	// Prefiller is the endpoint that prefills for Endpoint in a P/D pool
	// (pd.go), named to the decoder's sidecar in x-prefiller-host-port;
	// empty when Endpoint prefills itself.
	Prefiller string
	// Fallbacks are further endpoints in preference order.
	Fallbacks []string
	// Reason explains the choice for the decision header and debug logs.
	Reason string
	// ID names the decision in speculative entries and TTL outcomes.
	ID index.DecisionID
	// Basis is what the chosen endpoint's cached prefix rested on, and
	// Match what it held of the prompt's leading blocks.
	Basis Basis
	Match index.Match

	keys  []index.Key
	model string
	// inlineFallbacks holds Fallbacks when there are few, as with the
	// default count, saving an allocation per decision.
	inlineFallbacks [4]string
	// reasonBuf holds Reason's bytes when they fit, saving an allocation
	// per decision; it is written once, before Pick returns.
	reasonBuf    [reasonInline]byte
	promptTokens int
	blockSize    int
	prefill      int64
	s            *Scorer // nil for decisions not made by a Scorer

	// class is the size class (decisionalloc.go) plus one, 0 for a
	// decision that is never recycled.
	class uint8

	committed, started, usage, failed, released, moved, done atomic.Bool
	// shared is set once a PredictionSink was given the keys, which it may
	// keep: Done then leaves the decision to the garbage collector.
	shared atomic.Bool
	// unsettled is set while the commit's deferred expiry (Settle) is
	// pending over keys[settleFrom:].
	unsettled  atomic.Bool
	settleFrom int
	// served is the fallback the proxy reported using, once Served moved
	// the accounting there; nil while the chosen endpoint holds it.
	served atomic.Pointer[string]
}

// reasonInline is how many reason bytes a Decision holds without an
// allocation: a prefix decision's reason with an IPv6 endpoint fits.
const reasonInline = 240

// setReason sets Reason to b's text, in reasonBuf when it fits. The string
// shares reasonBuf's memory, which keeps the Decision alive while the string
// is referenced and is never written again.
func (d *Decision) setReason(b []byte) {
	if len(b) == 0 || len(b) > len(d.reasonBuf) {
		d.Reason = string(b)
		return
	}
	n := copy(d.reasonBuf[:], b)
	d.Reason = unsafe.String(&d.reasonBuf[0], n)
}

// errUsedAfterDone is the panic of a method called on a decision after Done.
const errUsedAfterDone = "scorer: Decision used after Done"

// live panics when d has been ended by Done: its memory may be another
// request's decision by now.
func (d *Decision) live() {
	if d.done.Load() {
		panic(errUsedAfterDone)
	}
}

// Done ends the decision's use (see Decision): it releases the decision
// when Release was not called, and hands its memory back to the scorer.
// Call it exactly once, after every other call; a second Done, or any
// method after it, panics.
func (d *Decision) Done() {
	if !d.done.CompareAndSwap(false, true) {
		panic(errUsedAfterDone)
	}
	d.release()
	d.recycle()
}

// target is the endpoint holding the decision's accounting: the chosen
// one, or the fallback the proxy reported serving.
func (d *Decision) target() string {
	if p := d.served.Load(); p != nil {
		return *p
	}
	return d.Endpoint
}

// Targets returns Endpoint followed by Fallbacks.
func (d *Decision) Targets() []string {
	d.live()
	return append([]string{d.Endpoint}, d.Fallbacks...)
}

// Commit starts the request's load and prefill-token accounting, inserts
// speculative entries for the blocks the chosen endpoint lacks (unless the TTL
// policy has paused speculation there) and starts the TTL policy's
// route-to-confirmation clock. Calling it twice is a no-op.
//
// Commit is what the request waits for; the bookkeeping its inserts leave,
// ending the predictions that came due in the index shards they wrote, is
// Settle's, which the caller runs once the request is on its way (ext_proc:
// once the answer naming the endpoint is sent), and Release runs when the
// caller did not.
func (d *Decision) Commit() {
	d.live()
	if d.s == nil || !d.committed.CompareAndSwap(false, true) {
		return
	}
	start := time.Now()
	d.s.load.add(d.Endpoint, 1)
	d.s.load.addPrefill(d.prefillAt(), d.prefill)
	d.prefillerLoad(1)
	if len(d.keys) > 0 {
		d.s.begin(d)
	}
	d.s.opts.Metrics.observe(stageCommit, start)
}

// Settle does the commit's deferred bookkeeping: it ends the predictions
// that came due in the index shards the commit's speculative inserts wrote,
// within the budget the inserts would have spent on them
// (index.ExpireAfter). It is the same work Commit did inline before, moved
// off the request's wait; the request's goroutine still does it. A no-op
// when nothing is pending; Release and Done settle a decision first.
func (d *Decision) Settle() {
	d.live()
	d.settle()
}

func (d *Decision) settle() {
	if d.unsettled.CompareAndSwap(true, false) {
		start := time.Now()
		d.s.opts.Index.ExpireAfter(d.keys[d.settleFrom:])
		d.s.opts.Metrics.observe(stageSettle, start)
	}
}

// ResponseStarted ends the prefill-token accounting: the engine has produced
// its first response bytes, so the prompt is no longer queued for prefill.
// extproc calls it on the response headers; it is optional, because Release
// ends the accounting too. Idempotent; a no-op before Commit.
func (d *Decision) ResponseStarted() {
	d.live()
	d.responseStarted()
}

func (d *Decision) responseStarted() {
	if d.committed.Load() && d.started.CompareAndSwap(false, true) {
		d.s.load.addPrefill(d.prefillAt(), -d.prefill)
		d.prefillerLoad(-1)
	}
}

// Usage reports the response's usage.prompt_tokens_details.cached_tokens
// (known=false when the response had none) to the TTL policy, when it
// observes usage, so it can judge whether a speculative route produced the
// predicted hit. Only the first call counts; a no-op before Commit and for
// load-only decisions.
func (d *Decision) Usage(promptTokens, cachedTokens int, known bool) {
	d.live()
	if !d.committed.Load() || len(d.keys) == 0 || !d.usage.CompareAndSwap(false, true) {
		return
	}
	if u, ok := d.s.opts.TTL.(UsageObserver); ok {
		u.Usage(d.ID, promptTokens, cachedTokens, known)
	}
}

// Failed withdraws the predictions this decision inserted: its request
// failed (an error status from the engine, or a stream that broke before the
// response began), so the engine stores none of those blocks, and leaving
// them until their TTL would route later requests to a cache that is not
// warm. Predictions other decisions made are kept. Idempotent; a no-op
// before Commit.
func (d *Decision) Failed() {
	d.live()
	if !d.committed.Load() || len(d.keys) == 0 || d.s.opts.Index == nil || !d.failed.CompareAndSwap(false, true) {
		return
	}
	d.s.opts.Index.Withdraw(d.prefillAt(), d.keys, d.ID)
}

// Release ends the request's load accounting (and its prefill accounting,
// when ResponseStarted was not called). It is idempotent and a no-op for a
// decision that was never committed.
func (d *Decision) Release() {
	d.live()
	d.release()
}

func (d *Decision) release() {
	if !d.committed.Load() || !d.released.CompareAndSwap(false, true) {
		return
	}
	d.settle()
	d.responseStarted()
	d.s.load.add(d.target(), -1)
}

// Served tells the decision which endpoint the proxy really used (the
// gateway's x-gateway-destination-endpoint-served) and reports how it
// compares: ServedChosen, ServedFallback when a fallback served, whose load,
// prefill and predictions then move there (the chosen endpoint's predictions
// are withdrawn: it never saw the prompt), or ServedUnlisted for an endpoint
// the decision did not offer, which changes nothing. Call it before
// ResponseStarted, from the goroutine that calls ResponseStarted and
// Release; only the first move counts. Returns ServedChosen before Commit.
func (d *Decision) Served(endpoint string) ServedResult {
	d.live()
	switch {
	case !d.committed.Load() || endpoint == d.Endpoint:
		return ServedChosen
	case !slices.Contains(d.Fallbacks, endpoint):
		return ServedUnlisted
	case d.released.Load() || !d.moved.CompareAndSwap(false, true):
		return ServedFallback
	}
	d.s.load.add(d.Endpoint, -1)
	d.s.load.add(endpoint, 1)
	if !d.started.Load() && d.Prefiller == "" {
		d.s.load.addPrefill(d.Endpoint, -d.prefill)
		d.s.load.addPrefill(endpoint, d.prefill)
	}
	d.served.Store(&endpoint)
	// A disaggregated decision's predictions stay on its prefiller, which
	// prefilled for whichever decoder served.
	if len(d.keys) > 0 && d.s.opts.Index != nil && !d.failed.Load() && d.Prefiller == "" {
		d.s.opts.Index.Withdraw(d.Endpoint, d.keys, d.ID)
		n := d.s.speculate(d, endpoint, 0, false)
		if m, ok := d.s.opts.TTL.(RouteMover); ok {
			// What the fallback held of the prompt is unknown here, so
			// the moved route claims no match: only its new predictions
			// are followed.
			m.Moved(d.ID, Route{Endpoint: endpoint, Model: d.model, PromptTokens: d.promptTokens,
				NewSpeculative: n, BlockSize: d.blockSize, At: time.Now()})
		}
	}
	return ServedFallback
}

// ServedResult compares the endpoint a proxy reported serving a request
// with the decision's choice; a bounded set used as a metric label.
type ServedResult uint8

// The results of Decision.Served.
const (
	ServedChosen ServedResult = iota
	ServedFallback
	ServedUnlisted
)

// String names the result for metric labels.
func (r ServedResult) String() string {
	switch r {
	case ServedFallback:
		return "fallback"
	case ServedUnlisted:
		return "unlisted"
	}
	return "chosen"
}
