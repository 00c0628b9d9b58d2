package grpcbuf

import (
	"math/bits"
	"sync"

	"google.golang.org/grpc/experimental"
	"google.golang.org/grpc/mem"
)

const (
	minShift = 8  // smallest tier: 256 bytes
	maxShift = 22 // largest tier: 4 MiB; longer buffers are not pooled
	tiers    = maxShift - minShift + 1
)

// Pool is a mem.BufferPool whose buffers are not cleared between uses:
// a buffer's bytes past what the caller writes are whatever its previous
// user left there.
type Pool struct {
	tiers [tiers]sync.Pool
}

var _ mem.BufferPool = (*Pool)(nil)

// New returns an empty pool.
func New() *Pool { return &Pool{} }

// tierFor returns the tier whose buffers hold n bytes (the smallest power
// of two at least n), or -1 when n is beyond the largest tier.
func tierFor(n int) int {
	if n <= 1<<minShift {
		return 0
	}
	s := bits.Len(uint(n - 1))
	if s > maxShift {
		return -1
	}
	return s - minShift
}

// Get returns a buffer of length n whose capacity is n rounded up to a
// power of two (at least 256), reusing a pooled one when there is one.
func (p *Pool) Get(n int) *[]byte {
	t := tierFor(n)
	if t < 0 {
		b := make([]byte, n)
		return &b
	}
	if b, ok := p.tiers[t].Get().(*[]byte); ok {
		*b = (*b)[:n]
		return b
	}
	b := make([]byte, n, 1<<(t+minShift))
	return &b
}

// Put returns b to the tier its capacity belongs to. A buffer whose
// capacity is no tier's size (one Get did not make, or one over the
// largest tier) is left to the garbage collector.
func (p *Pool) Put(b *[]byte) {
	c := cap(*b)
	if c < 1<<minShift || c > 1<<maxShift || c&(c-1) != 0 {
		return
	}
	p.tiers[bits.Len(uint(c))-1-minShift].Put(b)
}

var install sync.Once

// Install makes a Pool gRPC's default buffer pool, once per process. Call
// it before creating any gRPC server or client.
func Install() {
	install.Do(func() { experimental.SetDefaultBufferPool(New()) })
}
