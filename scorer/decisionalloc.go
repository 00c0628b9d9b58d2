package scorer

import (
	"sync"
	"sync/atomic"

	"github.com/warmroute/warmroute/index"
)

// A decision's keys live in the same allocation as the Decision itself,
// and Done hands both back for a later Pick: a steady-state prefix decision
// allocates nothing. A Decision is recycled only through Done, the caller's
// word that nothing will call or read it any more; one whose keys a
// PredictionSink was given (Options.Predictions may hold Prediction.Keys
// while it ships them) is left to the garbage collector instead, as is one
// never ended with Done, so not calling Done is always safe. A slice into
// the keyed struct keeps the whole struct alive, so an unrecycled
// decision's keys are freed exactly when nothing references them.
//
// The struct is chosen by size class, the smallest holding the prompt's
// keys (a class at most twice the keys); a prompt of more than the largest
// class (32,768 tokens at block size 16) keys into a slice of its own, an
// allocation small beside its tokenization, and is not recycled.
type (
	keyed16 struct {
		d    Decision
		keys [16]index.Key
	}
	keyed32 struct {
		d    Decision
		keys [32]index.Key
	}
	keyed64 struct {
		d    Decision
		keys [64]index.Key
	}
	keyed128 struct {
		d    Decision
		keys [128]index.Key
	}
	keyed256 struct {
		d    Decision
		keys [256]index.Key
	}
	keyed512 struct {
		d    Decision
		keys [512]index.Key
	}
	keyed1024 struct {
		d    Decision
		keys [1024]index.Key
	}
	keyed2048 struct {
		d    Decision
		keys [2048]index.Key
	}
)

// classes is how many size classes there are: no keys, then 16 to 2,048.
const classes = 9

// decisionPools holds each size class's recycled Decisions, already ended
// (Done) and poisoned; newDecision clears one before reuse.
var decisionPools [classes]sync.Pool

// quarantined makes Done poison a decision and never recycle it, so that
// any later use of it (a method call panics; keys, Reason and Fallbacks
// read as poison) is caught rather than silently reading another request's
// decision. It is on under the race detector, which the project's
// concurrency tests run under, and QuarantineDecisions turns it on.
var quarantined atomic.Bool

func init() { quarantined.Store(raceBuild) }

// QuarantineDecisions makes Done poison every decision it ends and never
// reuse one (on), or recycle them again (off, the default outside race
// builds), and returns the previous setting. It is for tests of code that
// drives Decisions: under quarantine a call or a read after Done panics or
// reads poison instead of touching a later request's decision. Decisions
// already recycled may still be handed out once.
func QuarantineDecisions(on bool) (was bool) { return quarantined.Swap(on) }

// classOf returns the size class holding n keys, or -1 when none does.
func classOf(n int) int {
	if n <= 0 {
		return 0
	}
	for c, size := 1, 16; c < classes; c, size = c+1, size*2 {
		if n <= size {
			return c
		}
	}
	return -1
}

// newDecision returns a zero Decision whose keys slice (length 0) has room
// for n keys in the Decision's own allocation when n fits a size class:
// a recycled one when its class's pool has one.
func newDecision(n int) *Decision {
	c := classOf(n)
	if c < 0 {
		return &Decision{keys: make([]index.Key, 0, n)}
	}
	if v := decisionPools[c].Get(); v != nil {
		d := v.(*Decision)
		*d = Decision{keys: d.keys[:0], class: uint8(c + 1)}
		return d
	}
	d := allocDecision(c)
	d.class = uint8(c + 1)
	return d
}

// allocDecision allocates a Decision of size class c with its keys.
func allocDecision(c int) *Decision {
	switch c {
	case 0:
		return new(Decision)
	case 1:
		x := new(keyed16)
		x.d.keys = x.keys[:0]
		return &x.d
	case 2:
		x := new(keyed32)
		x.d.keys = x.keys[:0]
		return &x.d
	case 3:
		x := new(keyed64)
		x.d.keys = x.keys[:0]
		return &x.d
	case 4:
		x := new(keyed128)
		x.d.keys = x.keys[:0]
		return &x.d
	case 5:
		x := new(keyed256)
		x.d.keys = x.keys[:0]
		return &x.d
	case 6:
		x := new(keyed512)
		x.d.keys = x.keys[:0]
		return &x.d
	case 7:
		x := new(keyed1024)
		x.d.keys = x.keys[:0]
		return &x.d
	}
	x := new(keyed2048)
	x.d.keys = x.keys[:0]
	return &x.d
}

// Poison is what a decision ended with Done reads as until it is reused,
// and for ever under quarantine: a caller still reading it sees these
// rather than plausible values.
const (
	poisonEndpoint = "<decision used after Done>"
	poisonKey      = index.Key(0xdeadbeefdeadbeef)
	poisonByte     = '#'
)

// recycle poisons d, which Done has ended, and returns it to its class's
// pool unless it is quarantined, not pooled (not made by newDecision, or
// keyed into a slice of its own) or its keys were shared with a sink.
func (d *Decision) recycle() {
	shared, quarantine := d.shared.Load(), quarantined.Load()
	d.Endpoint, d.Prefiller, d.Pool = poisonEndpoint, poisonEndpoint, poisonEndpoint
	for i := range d.inlineFallbacks {
		d.inlineFallbacks[i] = poisonEndpoint
	}
	for i := range d.reasonBuf {
		d.reasonBuf[i] = poisonByte
	}
	if quarantine && !shared {
		// Only the scorer reads keys (a sink's are never poisoned), and
		// a reused decision's are rewritten, so outside quarantine this
		// would only cost time.
		keys := d.keys[:cap(d.keys)]
		for i := range keys {
			keys[i] = poisonKey
		}
	}
	if quarantine || shared || d.class == 0 {
		return
	}
	decisionPools[d.class-1].Put(d)
}
