package gapsweep

import (
	"slices"
	"time"

	"github.com/warmroute/warmroute/api"
)

// Pair is one measured pair.
type Pair struct {
	Gap  string       `json:"gap"`
	GapD api.Duration `json:"gapDuration"`
	// ActualGap is between the two sends as measured, which the scheduler
	// may stretch.
	ActualGap    api.Duration `json:"actualGap"`
	Index        int          `json:"index"`
	First        Exchange     `json:"first"`
	Second       Exchange     `json:"second"`
	SameEndpoint bool         `json:"sameEndpoint"`
	// Uncached is the second request's prompt minus cached tokens; nil when
	// the server did not report cached tokens.
	Uncached *int    `json:"uncachedPrefillTokens"`
	Verdict  Verdict `json:"verdict"`
}

type gapJSON struct {
	Label string       `json:"label"`
	D     api.Duration `json:"duration"`
}

func gapsJSON(gs []Gap) []gapJSON {
	out := make([]gapJSON, len(gs))
	for i, g := range gs {
		out[i] = gapJSON{g.Label, api.Duration(g.D)}
	}
	return out
}

// GapSummary aggregates the pairs of one gap.
type GapSummary struct {
	Label    string          `json:"label"`
	Gap      api.Duration    `json:"gap"`
	Pairs    int             `json:"pairs"`
	Bases    map[Basis]int   `json:"bases"`
	Verdicts map[Verdict]int `json:"verdicts"`
	// Bad counts false warm routes and failures that looked confirmed.
	Bad int `json:"bad"`
	// MedianTTFT is the second requests' median; zero when none streamed.
	MedianTTFT api.Duration `json:"medianTtft"`
	// MeanUncached is over the second requests that reported cached tokens.
	MeanUncached *float64 `json:"meanUncachedPrefillTokens"`
}

// Result is a whole sweep: its fixed settings, every pair and a summary per
// gap. Decisions counts every request's basis by the router's metric label,
// so it can be compared with warmroute_scorer_decisions_total.
type Result struct {
	Target        string         `json:"target"`
	Debug         string         `json:"debug,omitempty"`
	Model         string         `json:"model"`
	LoRA          string         `json:"lora,omitempty"`
	CacheSalt     string         `json:"cacheSalt,omitempty"`
	BlockSize     int            `json:"blockSize"`
	BlockSizeFrom string         `json:"blockSizeFrom"`
	PrefixWords   int            `json:"prefixWords"`
	SuffixWords   int            `json:"suffixWords"`
	Fault         Fault          `json:"firstRequestFault"`
	PairsPerGap   int            `json:"pairsPerGap"`
	Timing        *timingJSON    `json:"routerTiming,omitempty"`
	Gaps          []gapJSON      `json:"gaps"`
	Pairs         []Pair         `json:"pairs"`
	Summary       []GapSummary   `json:"summary"`
	Decisions     map[string]int `json:"decisions"`
	Stopped       string         `json:"stopped,omitempty"`
	gaps          []Gap
}

// finish computes the summaries from the pairs.
func (r *Result) finish() *Result {
	r.Summary = r.Summary[:0]
	r.Decisions = map[string]int{}
	for _, g := range r.gaps {
		r.Summary = append(r.Summary, summarize(g, r.Pairs))
	}
	for _, p := range r.Pairs {
		r.Decisions[p.First.Decision.Basis.MetricLabel()]++
		r.Decisions[p.Second.Decision.Basis.MetricLabel()]++
	}
	return r
}

func summarize(g Gap, pairs []Pair) GapSummary {
	s := GapSummary{Label: g.Label, Gap: api.Duration(g.D), Bases: map[Basis]int{}, Verdicts: map[Verdict]int{}}
	var ttfts []time.Duration
	var uncached, known float64
	for _, p := range pairs {
		if p.GapD.D() != g.D || p.Gap != g.Label {
			continue
		}
		s.Pairs++
		s.Bases[p.Second.Decision.Basis]++
		s.Verdicts[p.Verdict]++
		if p.Verdict.Bad() {
			s.Bad++
		}
		if p.Second.TTFT > 0 {
			ttfts = append(ttfts, p.Second.TTFT.D())
		}
		if p.Uncached != nil {
			uncached += float64(*p.Uncached)
			known++
		}
	}
	if len(ttfts) > 0 {
		slices.Sort(ttfts)
		s.MedianTTFT = api.Duration(ttfts[len(ttfts)/2])
	}
	if known > 0 {
		m := uncached / known
		s.MeanUncached = &m
	}
	return s
}
