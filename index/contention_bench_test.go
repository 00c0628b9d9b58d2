package index

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warmroute/warmroute/internal/benchcpu"
)

// BenchmarkContention measures the shard locks' cost under contention, the
// number a shard count has to be chosen by: one goroutine applies engine
// messages as the subscriber does (each stores a 16-block chain for one of
// 8 endpoints and removes the chain that endpoint stored half a cycle
// earlier, so the index holds 65,536 blocks; WARMROUTE_BENCH_BLOCKS sets
// another chain length, such as a long prompt's 512), while the benchmark's own loop
// makes decisions: a Lookup of 64 keys over the 8 endpoints (the first 16 a
// resident chain's, the rest new) and a Speculate of them for one endpoint
// with a 1 s TTL. It reports the decisions' ns/op, their wall p99
// (p99-decision-ns), the decisions' CPU (cpu-ns/op, the whole process's
// CPU divided by the decisions: both goroutines' work) and the writer's
// rate (writer-blocks/s, stored blocks per wall second), and the share of
// decisions whose resident chain was found confirmed (resident-%, near 100
// unless the writer laps the reader). Run it with
// GOMAXPROCS=2 or more, so that the two goroutines do run at once, and
// with -count to interleave the shard counts. WARMROUTE_BENCH_SHARDS
// replaces the shard counts compared (comma-separated).
func BenchmarkContention(b *testing.B) {
	counts := []int{16, 64}
	if s := os.Getenv("WARMROUTE_BENCH_SHARDS"); s != "" {
		counts = counts[:0]
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(f)
			if err != nil || n < 1 {
				b.Fatalf("WARMROUTE_BENCH_SHARDS: %q is not a shard count", f)
			}
			counts = append(counts, n)
		}
	}
	for _, shards := range counts {
		b.Run(fmt.Sprintf("shards=%d", shards), func(b *testing.B) { benchContention(b, shards) })
	}
}

const contentionEndpoints = 8

// contentionBlocks is the blocks per message, WARMROUTE_BENCH_BLOCKS or 16.
func contentionBlocks() int {
	if n, err := strconv.Atoi(os.Getenv("WARMROUTE_BENCH_BLOCKS")); err == nil && n >= 16 && n <= 1<<14 {
		return n
	}
	return 16
}

// contentionRig is BenchmarkContention's index and its message cycle.
type contentionRig struct {
	ix     *Index
	blocks int // per chain and message
	n      int // chains in the cycle, half of them resident
	eps    []string
	chains []Stored // chain c, stored by endpoint c%8, chained to c-8
	keys   [][]Key  // chain c's keys
}

func newContentionRig(b *testing.B, shards int) *contentionRig {
	ix, err := New(Options{BlockSize: 16, Shards: shards})
	if err != nil {
		b.Fatal(err)
	}
	blocks := contentionBlocks()
	r := &contentionRig{ix: ix, blocks: blocks, n: 131072 / blocks, eps: make([]string, contentionEndpoints)}
	for i := range r.eps {
		r.eps[i] = fmt.Sprintf("10.7.0.%d:8000", i+1)
	}
	r.chains = make([]Stored, r.n)
	r.keys = make([][]Key, r.n)
	for c := range r.chains {
		ev := benchEvent(r.eps[c%contentionEndpoints], c+1, blocks)
		r.keys[c], _ = AppendKeys(nil, ev.Identity, 16, ev.Tokens)
		r.chains[c] = ev
	}
	for c := range r.n / 2 {
		r.message(c)
	}
	return r
}

// message applies message c of the cycle: chain c stored, and the chain its
// endpoint stored half a cycle earlier removed.
func (r *contentionRig) message(c int) {
	c %= r.n
	old := (c + r.n/2) % r.n
	changes := [2]Change{{Stored: r.chains[c]}, {Removed: true, Stored: Stored{Hashes: r.chains[old].Hashes, Medium: MediumGPU}}}
	var results [2]ChangeResult
	r.ix.Apply(r.eps[c%contentionEndpoints], 0, changes[:], results[:])
}

func benchContention(b *testing.B, shards int) {
	r := newContentionRig(b, shards)
	var stop atomic.Bool
	var stored atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for c := r.n / 2; !stop.Load(); c++ {
			r.message(c)
			stored.Add(int64(r.blocks))
		}
	}()
	keys := make([]Key, 64)
	fresh := benchTokens(16 * 48)
	dst := make([]Match, contentionEndpoints)
	lat := make([]time.Duration, 0, 1<<16)
	resident := 0 // decisions whose chain its endpoint held in full
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu, before := time.Now(), benchcpu.Start(), stored.Load()
	for i := 0; b.Loop(); i++ {
		// A chain stored a quarter cycle ago: resident (the writer's last
		// message stored chain n/2 + messages and removed the one half a
		// cycle before it), unless the writer laps the reader.
		c := (int(stored.Load()/int64(r.blocks)) + r.n/4) % r.n
		copy(keys, r.keys[c])
		fresh[0] = uint32(i) // a new tail per decision
		tail, _ := AppendChain(keys[:16], keys[15], 16, fresh)
		t0 := time.Now()
		dst = r.ix.Lookup(tail, r.eps, dst)
		if _, err := r.ix.Speculate(r.eps[i%contentionEndpoints], tail, DecisionID(i+1), time.Second); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
		if dst[c%contentionEndpoints].Confirmed >= 16 {
			resident++
		}
	}
	wall, used, writes := time.Since(start), cpu.Elapsed(), stored.Load()-before
	b.StopTimer()
	stop.Store(true)
	wg.Wait()
	slices.Sort(lat)
	b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-decision-ns")
	b.ReportMetric(float64(writes)/wall.Seconds(), "writer-blocks/s")
	b.ReportMetric(100*float64(resident)/float64(b.N), "resident-%")
}
