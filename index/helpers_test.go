package index

import (
	"sync"
	"testing"
	"time"

	"github.com/warmroute/warmroute/internal/testclock"
)

// recorder is an Observer that keeps every outcome.
type recorder struct {
	mu  sync.Mutex
	got []Outcome
}

func (r *recorder) Observe(o Outcome) {
	r.mu.Lock()
	r.got = append(r.got, o)
	r.mu.Unlock()
}

func (r *recorder) take() []Outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.got
	r.got = nil
	return out
}

const testBS = 4

// testStart is where the fixtures' clocks start.
var testStart = time.Unix(1_700_000_000, 0)

var testID = Identity{Model: "m"}

type fixture struct {
	ix    *Index
	clock *testclock.Manual
	obs   *recorder
}

func newFixture(t testing.TB, opts Options) *fixture {
	t.Helper()
	f := &fixture{clock: testclock.New(testStart), obs: &recorder{}}
	if opts.BlockSize == 0 {
		opts.BlockSize = testBS
	}
	opts.Now, opts.Observer = f.clock.Now, f.obs
	ix, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	f.ix = ix
	return f
}

// tokens returns n blocks of distinct tokens starting at block `from` of a
// sequence named by seed.
func tokens(seed, from, n int) []uint32 {
	out := make([]uint32, 0, n*testBS)
	for b := from; b < from+n; b++ {
		for j := range testBS {
			out = append(out, uint32(seed*100_000+b*testBS+j))
		}
	}
	return out
}

// engineHash stands in for an engine's hash of block b of sequence seed.
func engineHash(seed, b int) uint64 { return uint64(seed)<<32 | uint64(b) + 1 }

func hashes(seed, from, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = engineHash(seed, from+i)
	}
	return out
}

// store applies blocks [from, from+n) of sequence seed to (ep, rank).
func (f *fixture) store(t testing.TB, ep string, rank, seed, from, n int, m Medium) StoreResult {
	t.Helper()
	ev := Stored{Endpoint: ep, Rank: rank, Hashes: hashes(seed, from, n), Tokens: tokens(seed, from, n),
		BlockSize: testBS, Identity: testID, Medium: m}
	if from > 0 {
		ev.Parent, ev.HasParent = engineHash(seed, from-1), true
	}
	res, err := f.ix.Store(ev)
	if err != nil {
		t.Fatalf("Store: %v", err)
	}
	return res
}

// keys returns the request keys of the first n blocks of sequence seed.
func keysOf(t testing.TB, seed, n int) []Key {
	t.Helper()
	k, err := AppendKeys(nil, testID, testBS, tokens(seed, 0, n))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func (f *fixture) lookup(t testing.TB, seed, n int, eps ...string) []Match {
	t.Helper()
	return f.ix.Lookup(keysOf(t, seed, n), eps, nil)
}
