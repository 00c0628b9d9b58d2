package fleet

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
)

// Matrix is a comparison: every regime x policy, Seeds seeds each.
type Matrix struct {
	Regimes  []Regime
	Policies []string
	Seeds    int
	Tuning   Tuning
	// Parallel runs this many cells at once (at least 1).
	Parallel int
	// Progress, when set, gets one line per finished run.
	Progress io.Writer
}

// Cell is one (regime, policy) over every seed.
type Cell struct {
	Regime, Policy string
	Runs           []Result
	// Hit is the hit rate in percent, Uncached prefill tokens, FalseWarm
	// false warm routes per routed request in percent, TTFTs in ms.
	Hit, Uncached, FalseWarm, P50, P99 Summary
}

// Metric names a Cell summary.
type Metric int

// Metrics of a cell.
const (
	MetricHit Metric = iota
	MetricUncached
	MetricFalseWarm
	MetricP50
	MetricP99
)

// Of returns c's summary of m.
func (c *Cell) Of(m Metric) Summary {
	return [...]Summary{c.Hit, c.Uncached, c.FalseWarm, c.P50, c.P99}[m]
}

func newCell(regime, policy string, runs []Result) Cell {
	c := Cell{Regime: regime, Policy: policy, Runs: runs}
	var hit, unc, fw, p50, p99 []float64
	for _, r := range runs {
		hit = append(hit, 100*r.HitRate())
		unc = append(unc, float64(r.Uncached()))
		fw = append(fw, 100*r.FalseWarmShare())
		p50 = append(p50, ms(r.TTFTp50))
		p99 = append(p99, ms(r.TTFTp99))
	}
	c.Hit, c.Uncached, c.FalseWarm = Summarize(hit), Summarize(unc), Summarize(fw)
	c.P50, c.P99 = Summarize(p50), Summarize(p99)
	return c
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Run runs every cell; on ctx's end it returns the cells finished so far
// with ctx's error.
func (m Matrix) Run(ctx context.Context) ([]Cell, error) {
	type key struct{ r, p int }
	type job struct {
		key  key
		seed uint64
	}
	jobs := make(chan job)
	results := map[key][]Result{}
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	for range max(m.Parallel, 1) {
		wg.Go(func() {
			for j := range jobs {
				reg, pol := m.Regimes[j.key.r], m.Policies[j.key.p]
				start := time.Now()
				res, err := Run(reg, pol, j.seed, m.Tuning)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if err == nil {
					results[j.key] = append(results[j.key], res)
					if m.Progress != nil {
						fmt.Fprintf(m.Progress, "%s/%s seed %d: hit %.1f%% in %s\n", reg.Name, pol, j.seed,
							100*res.HitRate(), time.Since(start).Round(time.Millisecond))
					}
				}
				mu.Unlock()
			}
		})
	}
feed:
	for seed := 1; seed <= m.Seeds; seed++ {
		for r := range m.Regimes {
			for p := range m.Policies {
				select {
				case jobs <- job{key{r, p}, uint64(seed)}:
				case <-ctx.Done():
					break feed
				}
			}
		}
	}
	close(jobs)
	wg.Wait()
	var cells []Cell
	for r, reg := range m.Regimes {
		for p, pol := range m.Policies {
			if runs := results[key{r, p}]; len(runs) > 0 {
				slices.SortFunc(runs, func(a, b Result) int { return cmp.Compare(a.Seed, b.Seed) })
				cells = append(cells, newCell(reg.Name, pol, runs))
			}
		}
	}
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return cells, firstErr
}
