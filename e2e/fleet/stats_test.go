package fleet

import (
	"math"
	"testing"
)

// The expected values come from printed t tables, not from the library
// under test: t(0.975, 4) = 2.7764. The paired example has |t| = 2.093 on 4
// degrees of freedom, between the two-sided p = 0.20 (1.533) and p = 0.10
// (2.132) columns; Welch's example has |t| = 1.897 on 5.88 degrees of
// freedom, between p = 0.20 (1.440 at 6 df) and p = 0.10 (1.943 at 6 df,
// 2.015 at 5).
func TestSummarize(t *testing.T) {
	s := Summarize([]float64{1, 2, 3, 4, 5})
	if s.N != 5 || s.Mean != 3 || math.Abs(s.SD-math.Sqrt(2.5)) > 1e-12 {
		t.Fatalf("got %+v, want n=5 mean=3 sd=%.5f", s, math.Sqrt(2.5))
	}
	half := 2.7764 * math.Sqrt(2.5) / math.Sqrt(5)
	if math.Abs(s.Low-(3-half)) > 1e-3 || math.Abs(s.High-(3+half)) > 1e-3 {
		t.Errorf("interval [%.4f, %.4f], want 3 ± %.4f", s.Low, s.High, half)
	}
	one := Summarize([]float64{7})
	if one.Low != 7 || one.High != 7 || one.SD != 0 {
		t.Errorf("one value: %+v, want the mean as its own interval", one)
	}
	if empty := Summarize(nil); empty.N != 0 || empty.Mean != 0 {
		t.Errorf("no values: %+v", empty)
	}
}

func TestWelch(t *testing.T) {
	a, b := Summarize([]float64{1, 2, 3, 4, 5}), Summarize([]float64{2, 4, 6, 8, 10})
	if p := Welch(a, b); !(p > 0.10 && p < 0.20) {
		t.Errorf("p = %.4f, want in (0.10, 0.20)", p)
	}
	if p := Welch(a, Summarize([]float64{101, 102, 103, 104, 105})); p > 1e-6 {
		t.Errorf("far apart: p = %g, want ~0", p)
	}
	same := Summarize([]float64{2, 2, 2})
	if p := Welch(same, same); p != 1 {
		t.Errorf("identical constants: p = %v, want 1", p)
	}
	if p := Welch(same, Summarize([]float64{3, 3, 3})); p != 0 {
		t.Errorf("different constants: p = %v, want 0", p)
	}
	if p := Welch(Summarize([]float64{1}), a); !math.IsNaN(p) {
		t.Errorf("one value: p = %v, want NaN", p)
	}
}

func TestPaired(t *testing.T) {
	a := Summarize([]float64{1, 2, 3, 4, 5})
	b := Summarize([]float64{1.1, 2.3, 2.9, 4.4, 5.2}) // differences -0.1 -0.3 0.1 -0.4 -0.2: t = -2.093, 4 df
	if p := Paired(a, b); !(p > 0.10 && p < 0.20) {
		t.Errorf("p = %.4f, want in (0.10, 0.20)", p)
	}
	// A constant shift is certain even though Welch sees overlapping samples.
	c := Summarize([]float64{1.5, 2.5, 3.5, 4.5, 5.5})
	if p := Paired(a, c); p != 0 {
		t.Errorf("constant shift: paired p = %v, want 0", p)
	}
	if p := Welch(a, c); p < 0.5 {
		t.Errorf("constant shift: Welch p = %v, want large (the seeds vary more than the shift)", p)
	}
	if p, w := Paired(a, Summarize([]float64{1, 2})), Welch(a, Summarize([]float64{1, 2})); p != w {
		t.Errorf("unpaired sizes: %v, want Welch's %v", p, w)
	}
}
