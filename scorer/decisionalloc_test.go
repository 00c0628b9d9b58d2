package scorer

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/warmroute/warmroute/index"
)

// allocScorer is a 512-endpoint pool over an index holding the first half of
// every prompt newPrompt makes, as BenchmarkDecision builds it (smaller).
func allocScorer(t *testing.T, sink PredictionSink) *Scorer {
	t.Helper()
	eps := benchEndpoints(512)
	ix := benchIndex(t, eps, allocBlocks)
	return New(NewPools([]PoolConfig{{Name: "m", Endpoints: eps}}, ""), &Load{}, Options{
		Index: ix, Tokens: map[string]Tokens{"m": idTokens{}}, Fallbacks: 2, Predictions: sink,
	})
}

const allocBlocks = 64 * benchSeqBlocks

// A steady-state prefix decision (Pick, Commit, Release, Done over 512
// candidates, an all-new prompt of 128 blocks) allocates nothing: Done hands
// the Decision and its keys back for the next Pick. Without Done it
// allocates the Decision, which holds its keys, and nothing else.
func TestDecisionAllocations(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("instrumented builds allocate")
	}
	for _, tc := range []struct {
		name string
		done bool
		want float64
	}{{"done", true, 0}, {"never done", false, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			s := allocScorer(t, nil)
			ctx := context.Background()
			req := &Request{Kind: KindCompletion, Model: "m", PromptTokenIDs: [][]int{nil}}
			var prompt []int
			i := 0
			decide := func() {
				prompt = newPrompt(prompt, i, allocBlocks)
				req.PromptTokenIDs[0] = prompt
				d, err := s.Pick(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				if len(d.keys) != 2*benchSeqBlocks || d.Match.Confirmed != benchSeqBlocks {
					t.Fatalf("decision %d: %d keys, match %+v", i, len(d.keys), d.Match)
				}
				d.Commit()
				d.Release()
				if tc.done {
					d.Done()
				}
				i++
			}
			for range 2000 { // grow the index's prediction tables and the pools
				decide()
			}
			// The index's tables still grow now and then (a doubling is
			// one allocation spread over thousands of decisions), which
			// AllocsPerRun's whole-number mean leaves out.
			if got := testing.AllocsPerRun(500, decide); got != tc.want {
				t.Fatalf("%.2f allocations per decision, want %v", got, tc.want)
			}
		})
	}
}

// heldSink keeps every prediction it is given, as a sink shipping them
// later would, with a copy of its keys taken on arrival.
type heldSink struct {
	got, want [][]index.Key
}

func (h *heldSink) Predicted(p index.Prediction) {
	h.got, h.want = append(h.got, p.Keys), append(h.want, slices.Clone(p.Keys))
}

// The keys a PredictionSink holds, and those Failed and Served withdraw
// after Release, stay the decision's own however many decisions follow:
// no later decision may reuse their memory.
func TestDecisionKeysOutliveRelease(t *testing.T) {
	sink := &heldSink{}
	s := allocScorer(t, sink)
	ctx := context.Background()
	var released []*Decision
	var keys [][]index.Key
	for i := range 300 {
		d, err := s.Pick(ctx, completion(newPrompt(nil, i, allocBlocks)))
		if err != nil {
			t.Fatal(err)
		}
		d.Commit()
		d.Release()
		if i%10 == 0 {
			released, keys = append(released, d), append(keys, slices.Clone(d.keys))
		}
		if i%50 == 0 {
			runtime.GC()
		}
	}
	runtime.GC()
	if len(sink.got) != 300 {
		t.Fatalf("%d predictions shared, want 300", len(sink.got))
	}
	for i := range sink.got {
		if !slices.Equal(sink.got[i], sink.want[i]) {
			t.Fatalf("prediction %d's keys changed after later decisions", i)
		}
	}
	for i, d := range released {
		if !slices.Equal(d.keys, keys[i]) {
			t.Fatalf("released decision %d's keys changed after later decisions", i)
		}
		d.Failed() // withdraws by the decision's own keys, long after Release
	}
}

// A decision whose keys a PredictionSink was given is never recycled by
// Done, so the sink's keys stay the decision's own however many decisions
// follow, even with recycling on (no quarantine).
func TestDoneKeepsSharedKeys(t *testing.T) {
	defer QuarantineDecisions(QuarantineDecisions(false))
	sink := &heldSink{}
	s := allocScorer(t, sink)
	ctx := context.Background()
	for i := range 300 {
		d, err := s.Pick(ctx, completion(newPrompt(nil, i, allocBlocks)))
		if err != nil {
			t.Fatal(err)
		}
		d.Commit()
		d.Release()
		d.Done()
	}
	for i := range sink.got {
		if !slices.Equal(sink.got[i], sink.want[i]) {
			t.Fatalf("prediction %d's keys changed after its decision's Done and later decisions", i)
		}
	}
}

// Done recycles a decision: a later Pick of the same size class gets its
// memory back, cleared, and decides exactly as a fresh decision does.
func TestDoneRecycles(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops pooled values at random")
	}
	defer QuarantineDecisions(QuarantineDecisions(false))
	s := allocScorer(t, nil)
	fresh := allocScorer(t, nil)
	ctx := context.Background()
	reused := 0
	var last *Decision
	for i := range 50 {
		req := completion(newPrompt(nil, i, allocBlocks))
		d, err := s.Pick(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if d == last {
			reused++
		}
		want, err := fresh.Pick(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if d.done.Load() || d.committed.Load() || d.released.Load() || d.shared.Load() ||
			!slices.Equal(d.keys, want.keys) || d.Match != want.Match || d.Basis != want.Basis ||
			d.prefill != want.prefill || len(d.Fallbacks) != len(want.Fallbacks) ||
			strings.ContainsRune(d.Reason, poisonByte) || d.Pool != want.Pool {
			t.Fatalf("decision %d (reused %v) differs from a fresh one: %+v, want %+v", i, d == last, d, want)
		}
		d.Commit()
		d.Release()
		d.Done()
		last = d
	}
	if reused == 0 {
		t.Fatal("no decision was recycled")
	}
}

// After Done every method panics and the decision's fields read as poison
// (quarantined, so it is never reused); a second Done panics too.
func TestUseAfterDone(t *testing.T) {
	defer QuarantineDecisions(QuarantineDecisions(true))
	s := allocScorer(t, nil)
	for _, tc := range []struct {
		name string
		call func(d *Decision)
	}{
		{"Commit", (*Decision).Commit},
		{"Settle", (*Decision).Settle},
		{"ResponseStarted", (*Decision).ResponseStarted},
		{"Usage", func(d *Decision) { d.Usage(1, 1, true) }},
		{"Failed", (*Decision).Failed},
		{"Release", (*Decision).Release},
		{"Served", func(d *Decision) { d.Served("10.0.0.1:8000") }},
		{"Targets", func(d *Decision) { d.Targets() }},
		{"ResponseStored", func(d *Decision) { d.ResponseStored("resp_1") }},
		{"Done", (*Decision).Done},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := s.Pick(context.Background(), completion(newPrompt(nil, 1, allocBlocks)))
			if err != nil {
				t.Fatal(err)
			}
			d.Commit()
			d.Done()
			if s.load.InFlight(d.Endpoint) != 0 {
				t.Fatal("Done did not release the committed decision")
			}
			if d.Endpoint != poisonEndpoint || d.Fallbacks[0] != poisonEndpoint ||
				strings.Trim(d.Reason, string(rune(poisonByte))) != "" || d.keys[0] != poisonKey {
				t.Fatalf("fields after Done not poisoned: %q %q %q %x", d.Endpoint, d.Fallbacks, d.Reason, d.keys[0])
			}
			defer func() {
				if v := recover(); v != errUsedAfterDone {
					t.Fatalf("%s after Done: recovered %v, want the use-after-Done panic", tc.name, v)
				}
			}()
			tc.call(d)
		})
	}
}

// Decisions ended with Done and recycled while others are in flight on
// other goroutines never share memory with a live decision: every live
// decision's keys stay its own until its Done (run with -race, which also
// sees any unsynchronised reuse).
func TestDoneConcurrent(t *testing.T) {
	defer QuarantineDecisions(QuarantineDecisions(false))
	s := allocScorer(t, nil)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				prompt := newPrompt(nil, g*1000+i, allocBlocks)
				d, err := s.Pick(context.Background(), completion(prompt))
				if err != nil {
					t.Error(err)
					return
				}
				want := slices.Clone(d.keys)
				d.Commit()
				runtime.Gosched() // let the others recycle theirs meanwhile
				if i%3 == 0 {
					d.Failed()
				}
				d.Release()
				if !slices.Equal(d.keys, want) {
					t.Errorf("a live decision's keys changed before its Done")
					return
				}
				d.Done()
			}
		})
	}
	wg.Wait()
}

// Each size class holds its keys in the Decision's allocation, with room
// for exactly the class; a longer prompt keys into a slice of its own.
func TestNewDecisionSizeClasses(t *testing.T) {
	for _, tt := range []struct{ n, cap int }{
		{0, 0}, {1, 16}, {16, 16}, {17, 32}, {128, 128}, {129, 256}, {2048, 2048}, {2049, 2049},
	} {
		t.Run(fmt.Sprint(tt.n), func(t *testing.T) {
			d := newDecision(tt.n)
			if len(d.keys) != 0 || cap(d.keys) != tt.cap {
				t.Fatalf("keys len %d cap %d, want 0 and %d", len(d.keys), cap(d.keys), tt.cap)
			}
		})
	}
}
