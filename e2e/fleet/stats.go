package fleet

import (
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Summary is the mean of a metric over seeds with its 95% confidence
// interval (Student's t, n-1 degrees of freedom).
type Summary struct {
	N         int
	Mean, SD  float64
	Low, High float64
	values    []float64
}

// Summarize describes xs. With fewer than two values the interval is the
// mean itself.
func Summarize(xs []float64) Summary {
	s := Summary{N: len(xs), values: append([]float64(nil), xs...)}
	if len(xs) == 0 {
		return s
	}
	s.Mean, s.SD = stat.MeanStdDev(xs, nil)
	if len(xs) < 2 || math.IsNaN(s.SD) {
		s.SD, s.Low, s.High = 0, s.Mean, s.Mean
		return s
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(xs) - 1)}.Quantile(0.975)
	half := t * s.SD / math.Sqrt(float64(len(xs)))
	s.Low, s.High = s.Mean-half, s.Mean+half
	return s
}

// Welch is Welch's unequal-variance t-test of a against b: the two-sided p
// value of "the means are equal". Two samples without variance are equal
// (p=1) or certainly different (p=0).
func Welch(a, b Summary) float64 {
	if a.N < 2 || b.N < 2 {
		return math.NaN()
	}
	va, vb := a.SD*a.SD/float64(a.N), b.SD*b.SD/float64(b.N)
	if va+vb == 0 {
		if a.Mean == b.Mean {
			return 1
		}
		return 0
	}
	t := (a.Mean - b.Mean) / math.Sqrt(va+vb)
	df := (va + vb) * (va + vb) / (va*va/float64(a.N-1) + vb*vb/float64(b.N-1))
	return 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.CDF(-math.Abs(t))
}

// Paired is the paired t-test of a against b, whose values are matched by
// position (the same seed, so the same workload, under two policies): the
// two-sided p value of "the mean difference is zero". It has far more power
// than Welch when the seeds differ more from each other than the policies
// do. It falls back to Welch when the samples cannot be paired.
func Paired(a, b Summary) float64 {
	if a.N != b.N || a.N < 2 {
		return Welch(a, b)
	}
	d := make([]float64, a.N)
	for i := range d {
		d[i] = a.values[i] - b.values[i]
	}
	mean, sd := stat.MeanStdDev(d, nil)
	if sd == 0 || math.IsNaN(sd) {
		if mean == 0 {
			return 1
		}
		return 0
	}
	t := mean / (sd / math.Sqrt(float64(a.N)))
	return 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(a.N - 1)}.CDF(-math.Abs(t))
}

// Significance is the level below which Welch's p marks a difference.
const Significance = 0.05
