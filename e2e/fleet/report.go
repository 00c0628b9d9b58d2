package fleet

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// WriteTable prints cells as a markdown table, one row per (regime, policy).
// Each metric is the mean over seeds with its 95% confidence interval; a
// star marks a mean that differs from the same regime's adaptive policy by
// a paired t-test over seeds (the same workloads) at p < Significance.
func WriteTable(w io.Writer, cells []Cell) {
	fmt.Fprintln(w, "| regime | policy | TTL at end (seed 1) | hit rate % | uncached prefill tokens | false warm routes % | TTFT p50 ms | TTFT p99 ms |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|")
	for i := range cells {
		c := &cells[i]
		ref := find(cells, c.Regime, PolicyAdaptive)
		ttl := c.Runs[0].TTL
		if c.Policy == PolicyAdvised {
			ttl = fmt.Sprintf("%s (advised)", c.Runs[0].Advised)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", c.Regime, c.Policy, ttl,
			cellText(c, ref, MetricHit, 1), cellText(c, ref, MetricUncached, 0), cellText(c, ref, MetricFalseWarm, 2),
			cellText(c, ref, MetricP50, 0), cellText(c, ref, MetricP99, 0))
	}
}

func cellText(c, ref *Cell, m Metric, digits int) string {
	s := c.Of(m)
	text := fmt.Sprintf("%.*f ± %.*f", digits, s.Mean, digits, (s.High-s.Low)/2)
	if ref != nil && ref != c && Paired(s, ref.Of(m)) < Significance {
		text += " *"
	}
	return text
}

func find(cells []Cell, regime, policy string) *Cell {
	for i := range cells {
		if cells[i].Regime == regime && cells[i].Policy == policy {
			return &cells[i]
		}
	}
	return nil
}

// Goal is one target of the comparison, judged from the cells.
type Goal struct {
	Text   string
	Met    bool
	Detail string
}

// staticPolicies are the fixed TTLs adaptive must match.
var staticPolicies = []string{PolicyStatic05, PolicyStatic2, PolicyStatic5}

// CheckGoals judges the targets, for adaptive and adaptive-from-5s: its
// mean hit rate not below the lower end of the best static TTL's 95%
// interval in every regime (the paired p value is reported beside it); in
// long-prefill and silent ahead of static 2 s by at least 5 points of hit
// rate or 20% fewer uncached prefill tokens; false warm routes at most 1% of
// routed requests in silent and cut.
func CheckGoals(cells []Cell) []Goal {
	var out []Goal
	regimes := map[string]bool{}
	var order []string
	for _, c := range cells {
		if !regimes[c.Regime] {
			regimes[c.Regime] = true
			order = append(order, c.Regime)
		}
	}
	for _, pol := range []string{PolicyAdaptive, PolicyAdaptive5} {
		out = append(out, adaptiveGoals(cells, order, pol)...)
	}
	return out
}

// adaptiveGoals judges the targets for one adaptive policy pol.
func adaptiveGoals(cells []Cell, order []string, pol string) []Goal {
	var out []Goal
	for _, r := range order {
		ad := find(cells, r, pol)
		var best *Cell
		for _, p := range staticPolicies {
			if c := find(cells, r, p); c != nil && (best == nil || c.Hit.Mean > best.Hit.Mean) {
				best = c
			}
		}
		if ad == nil || best == nil {
			continue
		}
		p := Paired(ad.Hit, best.Hit)
		met := ad.Hit.Mean >= best.Hit.Low
		out = append(out, Goal{Text: fmt.Sprintf("%s: %s within the 95%% CI of the best static TTL (%s)", r, pol, best.Policy), Met: met,
			Detail: fmt.Sprintf("%.2f%% vs %.2f%% [%.2f, %.2f], paired p=%s", ad.Hit.Mean, best.Hit.Mean, best.Hit.Low, best.Hit.High, pText(p))})
	}
	for _, r := range []string{"long-prefill", "silent"} {
		ad, st := find(cells, r, pol), find(cells, r, PolicyStatic2)
		if ad == nil || st == nil {
			continue
		}
		gain := ad.Hit.Mean - st.Hit.Mean
		fewer := 0.0
		if st.Uncached.Mean > 0 {
			fewer = 1 - ad.Uncached.Mean/st.Uncached.Mean
		}
		out = append(out, Goal{Text: fmt.Sprintf("%s: %s beats static 2s by >= 5 points of hit rate or >= 20%% fewer uncached prefill tokens", r, pol),
			Met: gain >= 5 || fewer >= 0.2,
			Detail: fmt.Sprintf("%+.2f points (paired p=%s), %.1f%% fewer uncached tokens (p=%s)", gain, pText(Paired(ad.Hit, st.Hit)),
				100*fewer, pText(Paired(ad.Uncached, st.Uncached)))})
	}
	for _, r := range []string{"silent", "cut"} {
		if ad := find(cells, r, pol); ad != nil {
			out = append(out, Goal{Text: fmt.Sprintf("%s: %s false warm routes <= 1%% of routed requests", r, pol),
				Met: ad.FalseWarm.Mean <= 1, Detail: fmt.Sprintf("%.2f%% [%.2f, %.2f]", ad.FalseWarm.Mean, ad.FalseWarm.Low, ad.FalseWarm.High)})
		}
	}
	return out
}

func pText(p float64) string {
	if math.IsNaN(p) {
		return "n/a"
	}
	if p < 0.001 {
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", p)
}

// WriteGoals prints goals as a markdown list.
func WriteGoals(w io.Writer, goals []Goal) {
	for _, g := range goals {
		verdict := "**met**"
		if !g.Met {
			verdict = "**NOT MET**"
		}
		fmt.Fprintf(w, "- %s: %s (%s)\n", g.Text, verdict, g.Detail)
	}
}

// WriteRegimes lists what each regime is.
func WriteRegimes(w io.Writer, regs []Regime) {
	for _, r := range regs {
		fmt.Fprintf(w, "- `%s`: %s (%d endpoints)\n", r.Name, strings.TrimSpace(r.About), r.Endpoints)
	}
}
