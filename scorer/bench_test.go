package scorer

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/internal/benchcpu"
)

const (
	benchBS        = 16
	benchSeqBlocks = 64 // blocks per stored sequence
)

// benchIndex fills an index with `blocks` confirmed blocks: sequences of
// benchSeqBlocks blocks, each held by two of the endpoints.
func benchIndex(b testing.TB, endpoints []string, blocks int) *index.Index {
	return benchIndexWith(b, endpoints, blocks, index.Options{})
}

// benchIndexWith is benchIndex with further index options (block size and
// memory bound are the benchmark's).
func benchIndexWith(b testing.TB, endpoints []string, blocks int, opts index.Options) *index.Index {
	b.Helper()
	opts.BlockSize, opts.MaxBytes = benchBS, 16<<30
	ix, err := index.New(opts)
	if err != nil {
		b.Fatal(err)
	}
	toks := make([]uint32, benchSeqBlocks*benchBS)
	hashes := make([]uint64, benchSeqBlocks)
	for seq := range blocks / benchSeqBlocks {
		for i := range toks {
			toks[i] = uint32(seq*len(toks) + i)
		}
		for i := range hashes {
			hashes[i] = uint64(seq*benchSeqBlocks + i)
		}
		for r := range 2 {
			ep := endpoints[(seq+r)%len(endpoints)]
			if _, err := ix.Store(index.Stored{Endpoint: ep, Hashes: hashes, Tokens: toks, BlockSize: benchBS, Identity: index.Identity{Model: "m"}}); err != nil {
				b.Fatal(err)
			}
		}
	}
	return ix
}

// benchPrompts are 128-block prompts whose first half is a stored sequence.
func benchPrompts(blocks int) [][]int {
	seqs := blocks / benchSeqBlocks
	out := make([][]int, 256)
	for p := range out {
		seq := (p * 7919) % seqs
		ids := make([]int, 2*benchSeqBlocks*benchBS)
		for i := range ids {
			ids[i] = seq*benchSeqBlocks*benchBS + i // second half extends it, unseen
		}
		ids[benchSeqBlocks*benchBS] = 1<<31 + p // diverge right after the stored half
		out[p] = ids
	}
	return out
}

// newPrompt writes the i-th decision's prompt into buf: 128 blocks whose
// first half is a stored sequence and whose second half no earlier decision
// has sent, so every decision looks up, scores and speculates on blocks of
// its own, as a peer's benchmark of fresh requests does (repeating a few
// prompts would mostly extend each prompt's own earlier predictions).
func newPrompt(buf []int, i, blocks int) []int {
	seq := (i * 7919) % (blocks / benchSeqBlocks)
	half := benchSeqBlocks * benchBS
	buf = buf[:0]
	for k := range half {
		buf = append(buf, seq*half+k)
	}
	for k := range half {
		buf = append(buf, 1<<31+i*half+k)
	}
	return buf
}

// BenchmarkDecision times a whole routing decision without tokenization
// (token ids given) over all-new prompts (newPrompt): keys, lookup over
// every endpoint, scoring, choice, commit (with speculative insert), the
// commit's deferred expiry (Settle), release and Done (which recycles the
// decision). Every metric but the -wait- ones covers all of it; the -wait-
// ones (p99-wait-ns wall, p99-wait-cpu-ns and p99-steady-wait-cpu-ns the
// thread's CPU) cover Pick and Commit only, what the request waits for
// before ext_proc answers with its endpoint; p99-steady-pick-cpu-ns is the
// thread's CPU in Pick alone (lookup, scoring, choice), the floor of that
// wait if the commit's inserts moved after the answer. It reports p50 and p99 per decision, process CPU time per
// decision besides the mean, and the p99 of the deciding thread's own CPU
// time per decision (p99-cpu-ns; it leaves out descheduling and background
// GC, which on a shared machine dominate wall p99), and that p99 over the
// decisions during which the thread was never switched out (p99-quiet-cpu-ns;
// a switch lets other processes evict the caches the decision then misses,
// which CPU time counts) beside the share of decisions switched
// (switched-%). Decisions made once two TTLs (DefaultTTL) have passed since
// the first, when predictions expire as fast as they are made and the
// prediction tables have stopped growing, give p99-steady-cpu-ns (reported
// from 1,000 such decisions or more: -benchtime=200000x, since a faster
// machine makes 80,000 decisions in under two TTLs; with fewer it logs why
// the steady metrics are missing).
// Set WARMROUTE_BENCH_10M=1 to add 10M blocks.
func BenchmarkDecision(b *testing.B) {
	sizes := []int{1_000_000}
	if os.Getenv("WARMROUTE_BENCH_10M") != "" {
		sizes = append(sizes, 10_000_000)
	}
	for _, blocks := range sizes {
		for _, n := range []int{8, 64, 512} {
			b.Run(fmt.Sprintf("blocks=%dM/endpoints=%d", blocks/1_000_000, n), func(b *testing.B) {
				benchDecision(b, n, blocks)
			})
		}
	}
}

func benchDecision(b *testing.B, n, blocks int) {
	eps := benchEndpoints(n)
	ix := benchIndex(b, eps, blocks)
	s := New(NewPools([]PoolConfig{{Name: "m", Endpoints: eps}}, ""), &Load{}, Options{
		Index: ix, Tokens: map[string]Tokens{"m": idTokens{}}, Fallbacks: 2,
	})
	ctx := context.Background()
	lat := make([]time.Duration, 0, 1<<16)
	own := make([]time.Duration, 0, 1<<16)     // this thread's CPU per decision
	quiet := make([]time.Duration, 0, 1<<16)   // own, of decisions never switched out
	var steady []time.Duration                 // own, of decisions two TTLs after the first
	wait := make([]time.Duration, 0, 1<<16)    // wall, Pick and Commit: what the request waits for
	waitCPU := make([]time.Duration, 0, 1<<16) // this thread's CPU in Pick and Commit
	var steadyWait []time.Duration             // waitCPU, of decisions two TTLs after the first
	var steadyPick []time.Duration             // this thread's CPU in Pick alone, two TTLs after the first
	var first time.Time
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var prompt []int
	req := &Request{Kind: KindCompletion, Model: "m", PromptTokenIDs: [][]int{nil}}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	cpu := benchcpu.Start()
	for b.Loop() {
		prompt = newPrompt(prompt, i, blocks)
		req.PromptTokenIDs[0] = prompt // the caller's request, reused so only Pick's allocations count
		switches := threadSwitches()
		start, startCPU := time.Now(), benchcpu.ThreadNow()
		d, err := s.Pick(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		pickCPU := benchcpu.ThreadNow() - startCPU
		d.Commit()
		// What the request waits for ends here: Settle (the commit's
		// deferred expiry), Release and Done follow its answer.
		wait = append(wait, time.Since(start))
		waitCPU = append(waitCPU, benchcpu.ThreadNow()-startCPU)
		d.Settle()
		d.Release()
		d.Done()
		lat = append(lat, time.Since(start))
		own = append(own, benchcpu.ThreadNow()-startCPU)
		if threadSwitches() == switches {
			quiet = append(quiet, own[len(own)-1])
		}
		if i == 0 {
			first = start
		} else if start.Sub(first) >= 2*DefaultTTL {
			steady = append(steady, own[len(own)-1])
			steadyWait = append(steadyWait, waitCPU[len(waitCPU)-1])
			steadyPick = append(steadyPick, pickCPU)
		}
		i++
	}
	cpu.Report(b)
	slices.Sort(lat)
	slices.Sort(own)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
	// On a shared machine wall p99 is mostly time other processes held
	// the core; the thread's own CPU per decision is not.
	b.ReportMetric(float64(own[len(own)*99/100].Nanoseconds()), "p99-cpu-ns")
	if len(quiet) > 0 {
		slices.Sort(quiet)
		b.ReportMetric(float64(quiet[len(quiet)*99/100].Nanoseconds()), "p99-quiet-cpu-ns")
	}
	b.ReportMetric(100*float64(len(own)-len(quiet))/float64(len(own)), "switched-%")
	if len(steady) >= 1000 {
		slices.Sort(steady)
		slices.Sort(steadyWait)
		b.ReportMetric(float64(steady[len(steady)*99/100].Nanoseconds()), "p99-steady-cpu-ns")
		b.ReportMetric(float64(steady[len(steady)/2].Nanoseconds()), "p50-steady-cpu-ns")
		b.ReportMetric(float64(steadyWait[len(steadyWait)*99/100].Nanoseconds()), "p99-steady-wait-cpu-ns")
		slices.Sort(steadyPick)
		b.ReportMetric(float64(steadyPick[len(steadyPick)*99/100].Nanoseconds()), "p99-steady-pick-cpu-ns")
	} else if b.N > 1 {
		b.Logf("%d of %d decisions came two TTLs (%v) after the first, fewer than 1,000: no steady metrics; raise -benchtime",
			len(steady), b.N, 2*DefaultTTL)
	}
	slices.Sort(wait)
	slices.Sort(waitCPU)
	b.ReportMetric(float64(wait[len(wait)*99/100].Nanoseconds()), "p99-wait-ns")
	b.ReportMetric(float64(waitCPU[len(waitCPU)*99/100].Nanoseconds()), "p99-wait-cpu-ns")
}

// rusageThread is Linux's RUSAGE_THREAD, which package syscall lacks.
const rusageThread = 1

// threadSwitches returns how many times the calling thread has been switched
// out, voluntarily or not (-1 when unknown, so nothing counts as quiet).
func threadSwitches() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return -1
	}
	return ru.Nvcsw + ru.Nivcsw
}

func benchEndpoints(n int) []string {
	eps := make([]string, n)
	for i := range eps {
		eps[i] = fmt.Sprintf("10.0.%d.%d:8000", i/250, i%250+1)
	}
	return eps
}
