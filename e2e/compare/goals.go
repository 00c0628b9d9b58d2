package main

import (
	"fmt"
	"io"
)

// The goals.
const (
	// oracleShare: adaptive's hit rate must be at least this share of the
	// oracle's while events are healthy.
	oracleShare = 0.98
	// maxFalseWarmCut: false warm routes at most this share of routed
	// requests with the pipeline cut.
	maxFalseWarmCut = 0.01
)

// goal is one checked claim.
type goal struct {
	Claim  string `json:"claim"`
	Met    bool   `json:"met"`
	Detail string `json:"detail"`
}

// checkGoals evaluates the goals on rows; a goal whose rows were
// not run is left out.
func checkGoals(rows []result) []goal {
	find := func(sc, p string) *result {
		for i := range rows {
			if rows[i].Scenario == sc && rows[i].Policy == p {
				return &rows[i]
			}
		}
		return nil
	}
	var out []goal
	for _, sc := range scenarios() {
		a, s := find(sc.Name, policyAdaptive), find(sc.Name, policyStatic)
		if a != nil && s != nil {
			out = append(out, goal{Claim: "adaptive hit rate >= static 2s in " + sc.Name, Met: a.HitRate >= s.HitRate,
				Detail: fmt.Sprintf("%.2f%% vs %.2f%%", 100*a.HitRate, 100*s.HitRate)})
		}
	}
	if a, o := find("fast", policyAdaptive), find("fast", policyOracle); a != nil && o != nil {
		out = append(out, goal{Claim: "adaptive within 2% of the oracle with healthy (fast) events",
			Met: a.HitRate >= oracleShare*o.HitRate, Detail: fmt.Sprintf("%.2f%% vs oracle %.2f%% (ratio %.3f)",
				100*a.HitRate, 100*o.HitRate, ratio(a.HitRate, o.HitRate))})
	}
	for _, sc := range []string{"cut", "relays-down"} {
		if a := find(sc, policyAdaptive); a != nil {
			out = append(out, goal{Claim: "adaptive false warm routes <= 1% of routed requests in " + sc,
				Met: a.FalseWarmShare <= maxFalseWarmCut, Detail: fmt.Sprintf("%.0f of %d (%.2f%%)",
					a.FalseWarm, a.Requests+a.Injected, 100*a.FalseWarmShare)})
		}
	}
	for _, p := range []string{policyStatic, policyAdaptive} {
		if a, l := find("agents", p), find("agents", policyLoad); a != nil && l != nil {
			out = append(out, goal{Claim: p + " hit rate > load-only on the agent workload over /v1/messages",
				Met: a.HitRate > l.HitRate, Detail: fmt.Sprintf("%.2f%% vs %.2f%%", 100*a.HitRate, 100*l.HitRate)})
		}
	}
	return out
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func writeGoals(w io.Writer, goals []goal) {
	if len(goals) == 0 {
		return
	}
	fmt.Fprintln(w)
	for _, g := range goals {
		mark := "NOT MET"
		if g.Met {
			mark = "met"
		}
		fmt.Fprintf(w, "- %s: **%s** (%s)\n", g.Claim, mark, g.Detail)
	}
}
