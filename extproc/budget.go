package extproc

import (
	"fmt"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// initialBodyCap is the most a stream allocates for a body before its bytes
// arrive: the announced Content-Length is the client's word, not its bytes,
// so it only bounds the first allocation from above. Larger bodies grow by
// doubling, each step paid for from the budget before it is allocated.
const initialBodyCap = 32 << 10

// bodyBudget bounds the request body bytes all streams hold at once. Safe
// for concurrent use; build it with newBodyBudget.
type bodyBudget struct {
	limit int64
	used  atomic.Int64
	gauge prometheus.Gauge
}

func newBodyBudget(limit int64, gauge prometheus.Gauge) *bodyBudget {
	return &bodyBudget{limit: limit, gauge: gauge}
}

// acquire reserves n bytes, or reports false (reserving nothing) when that
// would exceed the limit.
func (b *bodyBudget) acquire(n int64) bool { return b.acquireOver(n, 0) }

// acquireOver is acquire allowing the total to exceed the limit by up to
// slack bytes.
func (b *bodyBudget) acquireOver(n, slack int64) bool {
	for {
		u := b.used.Load()
		if u+n > b.limit+slack {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			b.gauge.Add(float64(n))
			return true
		}
	}
}

// release returns n bytes reserved by acquire.
func (b *bodyBudget) release(n int64) {
	b.used.Add(-n)
	b.gauge.Sub(float64(n))
}

// bufferedBytes is the number of body bytes the server's streams hold now.
func (s *Server) bufferedBytes() int64 { return s.budget.used.Load() }

// grow makes room for n more body bytes, reserving the added capacity from
// the server's budget before allocating it. The old buffer becomes garbage
// as the new one takes its place, so only the difference is reserved.
func (st *stream) grow(n int) error {
	need := len(st.body) + n
	if need <= cap(st.body) {
		return nil
	}
	c := max(need, 2*cap(st.body), initialBodyCap)
	if st.contentLength >= int64(need) {
		c = min(c, int(st.contentLength))
	}
	c = max(need, min(c, int(st.srv.opts.MaxBodyBytes)))
	// The next part of this body may already be read ahead and reserved:
	// those bytes are this stream's, so they do not count against its own
	// growth (without this a lone body could be refused, depending on
	// whether the receive goroutine had read its next message yet).
	if !st.srv.budget.acquireOver(int64(c)-st.held, st.readAhead.Load()) {
		return st.overloaded(int64(c) - st.held)
	}
	nb := make([]byte, len(st.body), c)
	copy(nb, st.body)
	st.body, st.held = nb, int64(c)
	return nil
}

// dropBody forgets the body and returns its reservation.
func (st *stream) dropBody() {
	if st.held > 0 {
		st.srv.budget.release(st.held)
	}
	st.body, st.held = nil, 0
}

// holdBuffered reserves a body Envoy sent whole, for the time it is parsed
// and routed; the caller releases n.
func (st *stream) holdBuffered(n int64) error {
	if !st.srv.budget.acquireOver(n, st.readAhead.Load()) {
		return st.overloaded(n)
	}
	return nil
}

func (st *stream) overloaded(n int64) error {
	return fmt.Errorf("%w: %d more request body bytes would exceed the router's budget of %d",
		ErrOverloaded, n, st.srv.opts.MaxBufferedBytes)
}
