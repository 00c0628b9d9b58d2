package scorer

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/warmroute/warmroute/index"
)

// combineByComponents is combine as a pass per component and per weight:
// each component's Score into a scratch slice, anti-herding on the prefix
// part, then combiner.add. combine's fused pass must give the very same
// floats.
func combineByComponents(c *combiner, f *field) (total []float64, herded int) {
	n := len(f.endpoints)
	total, part := make([]float64, n), make([]float64, n)
	c.total, c.part = total, part
	sum := 0.0
	if f.blocks > 0 && c.w.prefix > 0 {
		prefixScore{}.Score(f, part)
		herded = discountHerd(f, part, c.w.herdMargin)
		c.add(c.w.prefix, &sum)
	}
	if c.w.load > 0 {
		loadScore{}.Score(f, part)
		c.add(c.w.load, &sum)
	}
	if c.engine != nil && c.w.engine > 0 {
		engineScore{c.engine}.Score(f, part)
		c.add(c.w.engine, &sum)
	}
	if sum > 0 {
		for i := range total {
			total[i] /= sum
		}
	}
	return total, herded
}

// randomField is n candidates with random matches, trust and loads (few
// distinct values, so ties and herding happen).
func randomField(r *rand.Rand, n int) *field {
	f := &field{blocks: r.IntN(5) * 16}
	for i := range n {
		f.endpoints = append(f.endpoints, string(rune('a'+i%26))+string(rune('a'+i/26)))
		c, s := r.IntN(f.blocks+1), 0
		if c < f.blocks {
			s = r.IntN(f.blocks - c + 1)
		}
		f.matches = append(f.matches, index.Match{Confirmed: c, Speculative: s, Weighted: float64(c) * []float64{1, 0.5, 0.25}[r.IntN(3)]})
		f.trust = append(f.trust, []float64{0, 0.5, 1}[r.IntN(3)])
		f.loads = append(f.loads, loadSample{inflight: int64(r.IntN(12)), prefill: int64(r.IntN(3) * 1000)})
	}
	return f
}

func TestCombineFusedMatchesComponents(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	engines := gauges{"aa": {1, 2, 0.5}, "ba": {0, 0, 0.9}, "ca": {4, 1, math.NaN()}}
	ws := []weights{
		{prefix: 1, load: 0.5, engine: 0.3, herdMargin: 4, epsilon: 0.02}, // defaults
		{prefix: 1, herdMargin: 2},
		{load: 1},
		{prefix: 2, load: 1, herdMargin: 0},
		{prefix: 1, load: 1, engine: 1, herdMargin: 1},
		{},
		{prefix: math.Inf(1), load: 1, herdMargin: 3}, // NaN totals
	}
	for round := range 2000 {
		f := randomField(r, 1+r.IntN(40))
		w := ws[round%len(ws)]
		var engine EngineLoad
		if round%3 == 0 {
			engine = engines
		}
		c := combiner{w: w, engine: engine}
		got := slices.Clone(c.combine(f))
		gotHerded := c.herded
		want, wantHerded := combineByComponents(&combiner{w: w, engine: engine}, f)
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
				t.Fatalf("round %d, weights %+v: total[%d] = %v, components give %v", round, w, i, got[i], want[i])
			}
		}
		if gotHerded != wantHerded {
			t.Fatalf("round %d: herded %d, components %d", round, gotHerded, wantHerded)
		}
	}
}

// FuzzTopK checks the one-scan topK against topKScan, the k scans it
// replaced, on totals with many ties (and NaN).
func FuzzTopK(f *testing.F) {
	f.Add([]byte{1, 9, 5, 7}, uint8(1), uint8(2))
	f.Add([]byte{3, 3, 3, 3, 3}, uint8(0), uint8(3))
	f.Add([]byte{255, 1, 255, 2}, uint8(2), uint8(2))
	f.Fuzz(func(t *testing.T, vals []byte, skip, k uint8) {
		if len(vals) < 2 {
			return
		}
		total := make([]float64, len(vals))
		for i, v := range vals {
			total[i] = float64(v%8) / 8
			if v == 255 {
				total[i] = math.NaN()
			}
		}
		s, kk := int(skip)%len(total), int(k)%(len(total)+2)
		got := topK([]int{-7}, total, s, kk) // a prefix the call must keep
		want := []int{-7}
		if n := min(kk, len(total)-1); n > 0 {
			want = topKScan(want, total, s, n)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("topK(%v, skip %d, k %d) = %v, k scans give %v", total, s, kk, got, want)
		}
	})
}

// FuzzMaxFloat checks maxFloat against one running max, bit for bit (NaN,
// signed zeros, infinities).
func FuzzMaxFloat(f *testing.F) {
	f.Add([]byte{1, 9, 5, 7, 2})
	f.Add([]byte{0, 1, 0, 1, 0, 1, 0, 1, 0})
	f.Add([]byte{3, 3, 255, 3, 3, 3})
	f.Add([]byte{4})
	f.Fuzz(func(t *testing.T, vals []byte) {
		if len(vals) == 0 {
			return
		}
		special := []float64{math.Copysign(0, -1), 0, math.Inf(-1), math.Inf(1), math.NaN()}
		v := make([]float64, len(vals))
		for i, b := range vals {
			if int(b) < len(special) {
				v[i] = special[b]
			} else {
				v[i] = float64(b%16) - 8
			}
		}
		want := v[0]
		for _, x := range v[1:] {
			want = max(want, x)
		}
		if got := maxFloat(v); math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Fatalf("maxFloat(%v) = %v, one running max gives %v", v, got, want)
		}
	})
}

// BenchmarkChoose times choose over 512 candidates' totals (two of them
// ahead, as with a prefix two endpoints hold) with maxFloat and, as the
// baseline in the same run, with one running max.
func BenchmarkChoose(b *testing.B) {
	total := make([]float64, 512)
	for i := range total {
		total[i] = 0.25 + float64(i%7)/100
	}
	total[17], total[300] = 0.9, 0.9
	fb := make([]int, 0, 4)
	runningMax := func(v []float64) float64 {
		m := v[0]
		for _, x := range v[1:] {
			m = max(m, x)
		}
		return m
	}
	for _, bc := range []struct {
		name string
		top  func([]float64) float64
	}{{"maxFloat", maxFloat}, {"running", runningMax}} {
		b.Run("max="+bc.name, func(b *testing.B) {
			for b.Loop() {
				if bc.top(total) != 0.9 {
					b.Fatal("wrong max")
				}
			}
		})
	}
	b.Run("choose", func(b *testing.B) {
		for b.Loop() {
			if best, _, ties := choose(total, 1e-9, 2, fb); ties != 2 || (best != 17 && best != 300) {
				b.Fatalf("best %d of %d ties", best, ties)
			}
		}
	})
}
