package scorer

import (
	"context"
	"fmt"
	"runtime"
	"slices"
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

// A steady-state prefix decision (Pick, Commit, Release over 512
// candidates, an all-new prompt of 128 blocks) allocates only the Decision,
// which holds its keys.
func TestDecisionAllocations(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("instrumented builds allocate")
	}
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
		i++
	}
	for range 2000 { // grow the index's prediction tables and the pools
		decide()
	}
	// The index's tables still grow now and then (a doubling is one
	// allocation spread over thousands of decisions), hence the mean.
	if got := testing.AllocsPerRun(500, decide); got > 1.05 {
		t.Fatalf("%.2f allocations per decision, want 1 (the Decision with its keys)", got)
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
