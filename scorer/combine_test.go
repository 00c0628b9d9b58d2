package scorer

import (
	"testing"

	"github.com/warmroute/warmroute/index"
)

func TestResolveWeights(t *testing.T) {
	tests := []struct {
		name   string
		global ScoringConfig
		want   weights
	}{
		{name: "defaults", want: weights{1, 0.5, 0.3, 4, 0.02}},
		{name: "global override", global: ScoringConfig{LoadWeight: Float(2)}, want: weights{1, 2, 0.3, 4, 0.02}},
		{name: "explicit zero kept", global: ScoringConfig{LoadWeight: Float(0), TieEpsilon: Float(0.1)}, want: weights{1, 0, 0.3, 4, 0.1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := resolveWeights(tt.global); got != tt.want {
				t.Fatalf("weights = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestCombine(t *testing.T) {
	full := []index.Match{{Confirmed: 4, Weighted: 4}, {}}
	tests := []struct {
		name   string
		w      weights
		blocks int
		loads  []loadSample
		engine EngineLoad
		want   []float64
	}{
		{name: "prefix only", w: weights{prefix: 1}, blocks: 4, loads: []loadSample{{0, 0}, {0, 0}}, want: []float64{1, 0}},
		{name: "load only", w: weights{load: 1}, blocks: 4, loads: []loadSample{{2, 0}, {0, 0}}, want: []float64{0.5, 1}},
		{name: "prefix and load normalised", w: weights{prefix: 1, load: 1}, blocks: 4, loads: []loadSample{{2, 0}, {0, 0}}, want: []float64{0.75, 0.5}},
		{name: "no blocks leaves prefix weight out", w: weights{prefix: 1, load: 1}, blocks: 0, loads: []loadSample{{2, 0}, {0, 0}}, want: []float64{0.5, 1}},
		{name: "engine without source left out", w: weights{load: 1, engine: 5}, blocks: 4, loads: []loadSample{{0, 0}, {0, 0}}, want: []float64{1, 1}},
		{name: "engine weighed", w: weights{load: 1, engine: 1}, blocks: 4, loads: []loadSample{{0, 0}, {0, 0}},
			engine: gauges{"a": {0, 0, 1}, "b": {0, 0, 0}}, want: []float64{0.75, 1}},
		{name: "all weights zero", w: weights{}, blocks: 4, loads: []loadSample{{0, 0}, {9, 0}}, want: []float64{0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &field{endpoints: []string{"a", "b"}, matches: full, trust: []float64{1, 1}, loads: tt.loads, blocks: tt.blocks}
			c := combiner{w: tt.w, engine: tt.engine}
			checkScores(t, c.combine(f), tt.want)
		})
	}
}

// A component that strays outside [0,1] is clamped, so it cannot dominate.
func TestCombinerClampsComponents(t *testing.T) {
	c := combiner{total: make([]float64, 3), part: []float64{-4, 0.5, 9}}
	sum := 0.0
	c.add(2, &sum)
	checkScores(t, c.total, []float64{0, 1, 2})
	if sum != 2 {
		t.Fatalf("weight sum = %v, want 2", sum)
	}
}

func TestDiscountHerd(t *testing.T) {
	tests := []struct {
		name   string
		margin float64
		loads  []int64
		prefix []float64
		want   []float64
		wantN  int
	}{
		{name: "within margin", margin: 4, loads: []int64{4, 0}, prefix: []float64{1, 0}, want: []float64{1, 0}},
		{name: "half way past margin", margin: 4, loads: []int64{6, 0}, prefix: []float64{1, 0}, want: []float64{0.5, 0}, wantN: 1},
		{name: "twice the margin", margin: 4, loads: []int64{8, 0}, prefix: []float64{1, 0}, want: []float64{0, 0}, wantN: 1},
		{name: "far past margin", margin: 4, loads: []int64{50, 0}, prefix: []float64{0.8, 0.1}, want: []float64{0, 0.1}, wantN: 1},
		{name: "relative to least loaded", margin: 2, loads: []int64{13, 10, 10}, prefix: []float64{1, 1, 0}, want: []float64{0.5, 1, 0}, wantN: 1},
		{name: "no prefix nothing to discount", margin: 1, loads: []int64{9, 0}, prefix: []float64{0, 0}, want: []float64{0, 0}},
		{name: "zero margin disables", margin: 0, loads: []int64{100, 0}, prefix: []float64{1, 0}, want: []float64{1, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &field{loads: make([]loadSample, len(tt.loads))}
			for i, l := range tt.loads {
				f.loads[i].inflight = l
			}
			n := discountHerd(f, tt.prefix, tt.margin)
			checkScores(t, tt.prefix, tt.want)
			if n != tt.wantN {
				t.Fatalf("discounted %d, want %d", n, tt.wantN)
			}
		})
	}
}

func TestChooseNearTies(t *testing.T) {
	tests := []struct {
		name     string
		total    []float64
		epsilon  float64
		wantSet  []int // every one must be chosen sometimes, no other ever
		wantTies int
	}{
		{name: "clear winner", total: []float64{0.2, 0.9, 0.5}, epsilon: 0.02, wantSet: []int{1}, wantTies: 1},
		{name: "exact tie", total: []float64{0.7, 0.7, 0.1}, epsilon: 0, wantSet: []int{0, 1}, wantTies: 2},
		{name: "within epsilon", total: []float64{0.80, 0.79, 0.70, 0.81}, epsilon: 0.02, wantSet: []int{0, 1, 3}, wantTies: 3},
		{name: "just outside epsilon", total: []float64{0.80, 0.77}, epsilon: 0.02, wantSet: []int{0}, wantTies: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := map[int]int{}
			for range 400 {
				best, _, ties := choose(tt.total, tt.epsilon, 0, nil)
				seen[best]++
				if ties != tt.wantTies {
					t.Fatalf("ties = %d, want %d", ties, tt.wantTies)
				}
			}
			// Each of up to 3 equivalent candidates is missed by 400
			// uniform draws with probability (2/3)^400, about 1e-70.
			if len(seen) != len(tt.wantSet) {
				t.Fatalf("chosen %v, want exactly %v", seen, tt.wantSet)
			}
			for _, i := range tt.wantSet {
				if seen[i] == 0 {
					t.Fatalf("chosen %v, want every one of %v", seen, tt.wantSet)
				}
			}
		})
	}
}

func TestTopK(t *testing.T) {
	total := []float64{0.1, 0.9, 0.5, 0.7}
	tests := []struct {
		name string
		skip int
		k    int
		want []int
	}{
		{name: "none", skip: 1, k: 0, want: nil},
		{name: "two", skip: 1, k: 2, want: []int{3, 2}},
		{name: "more than there are", skip: 1, k: 9, want: []int{3, 2, 0}},
		{name: "skip not best", skip: 3, k: 2, want: []int{1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := topK(nil, total, tt.skip, tt.k)
			if len(got) != len(tt.want) {
				t.Fatalf("topK = %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("topK = %v, want %v", got, tt.want)
				}
			}
		})
	}
}
