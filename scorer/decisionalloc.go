package scorer

import "github.com/warmroute/warmroute/index"

// A decision's keys live in the same allocation as the Decision itself, so
// a prefix decision costs one allocation, not two. Pooling either is not
// safe: the keys outlive Pick and even Release (Failed and Served withdraw
// them, and a PredictionSink may hold Prediction.Keys while it ships them),
// and no call marks the end of a Decision's use. One allocation needs no
// such mark: a slice into the keyed struct keeps the whole struct alive, so
// the garbage collector frees the keys exactly when neither the Decision
// nor any slice of its keys is referenced.
//
// The struct is chosen by size class, the smallest holding the prompt's
// keys (a class at most twice the keys); a prompt of more than the largest
// class (32,768 tokens at block size 16) keys into a slice of its own, an
// allocation small beside its tokenization.
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

// newDecision returns a zero Decision whose keys slice (length 0) has room
// for n keys in the Decision's own allocation when n fits a size class.
func newDecision(n int) *Decision {
	switch {
	case n <= 0:
		return new(Decision)
	case n <= 16:
		x := new(keyed16)
		x.d.keys = x.keys[:0]
		return &x.d
	case n <= 32:
		x := new(keyed32)
		x.d.keys = x.keys[:0]
		return &x.d
	case n <= 64:
		x := new(keyed64)
		x.d.keys = x.keys[:0]
		return &x.d
	case n <= 128:
		x := new(keyed128)
		x.d.keys = x.keys[:0]
		return &x.d
	case n <= 256:
		x := new(keyed256)
		x.d.keys = x.keys[:0]
		return &x.d
	case n <= 512:
		x := new(keyed512)
		x.d.keys = x.keys[:0]
		return &x.d
	case n <= 1024:
		x := new(keyed1024)
		x.d.keys = x.keys[:0]
		return &x.d
	case n <= 2048:
		x := new(keyed2048)
		x.d.keys = x.keys[:0]
		return &x.d
	}
	return &Decision{keys: make([]index.Key, 0, n)}
}
