package ttl

import (
	"math"
	"time"

	"github.com/warmroute/warmroute/api"
)

// Advice is the TTL the measured latencies call for: T = Lq + J, with J the
// observed subscriber backlog plus the configured jitter allowance, rounded
// up to the resolution after the arithmetic and capped at MaxStale.
// Durations are api.Duration so the admin JSON reads "1.5s".
type Advice struct {
	// Ready is false until the window holds MinSamples confirmations; TTL is
	// then 0 and nothing acts on the advice.
	Ready   bool `json:"ready"`
	Samples int  `json:"samples"`
	// Quantile is Lq, the configured percentile of the window's latencies.
	Quantile api.Duration `json:"quantile"`
	Backlog  api.Duration `json:"backlog"`
	Jitter   api.Duration `json:"jitter"`
	// Raw is Lq + J before rounding and the cap.
	Raw api.Duration `json:"raw"`
	TTL api.Duration `json:"ttl"`
	// Capped is true when MaxStale cut the advice: the TTL no longer covers
	// the chosen percentile, and late confirmations are expected.
	Capped bool `json:"capped"`
	// P50, P95, P99 and Max describe the distribution alongside Lq.
	P50 api.Duration `json:"p50"`
	P95 api.Duration `json:"p95"`
	P99 api.Duration `json:"p99"`
	Max api.Duration `json:"max"`
}

// advisor holds the settings advise needs.
type advisor struct {
	pct        Percentile
	jitter     time.Duration
	maxStale   time.Duration
	resolution time.Duration
	minSamples int
}

// advise computes Advice from a window's latencies (sorted in place) and the
// backlog peak.
func (a *advisor) advise(lat []time.Duration, backlog time.Duration) Advice {
	adv := Advice{Samples: len(lat), Backlog: api.Duration(backlog), Jitter: api.Duration(a.jitter)}
	if len(lat) == 0 {
		return adv
	}
	lq := quantile(lat, a.pct) // sorts lat; the reads below are cheap
	adv.Quantile = api.Duration(lq)
	adv.P50, adv.P95 = api.Duration(quantile(lat, 0.5)), api.Duration(quantile(lat, 0.95))
	adv.P99, adv.Max = api.Duration(quantile(lat, 0.99)), api.Duration(lat[len(lat)-1])
	if len(lat) < a.minSamples {
		return adv
	}
	raw := lq + backlog + a.jitter
	ttl := roundUp(raw, a.resolution)
	if ttl > a.maxStale {
		ttl, adv.Capped = a.maxStale, true
	}
	adv.Ready, adv.Raw, adv.TTL = true, api.Duration(raw), api.Duration(ttl)
	return adv
}

// roundUp rounds d up to a multiple of res. Up, because a TTL rounded down
// would no longer cover the percentile it was computed from.
func roundUp(d, res time.Duration) time.Duration {
	if res <= 0 {
		return d
	}
	if r := d % res; r != 0 {
		d += res - r
	}
	return d
}

// Exposure prices failed predictions at a TTL: the steady-state number of
// live failed predictions is rate x failure probability x TTL; weighting by
// the predicted tokens a failed decision leaves behind gives the prefix
// tokens at risk, since a false 8k-token prefix costs more than a 64-token
// one.
type Exposure struct {
	// Rate is decisions per second that created speculative entries.
	Rate float64 `json:"rate"`
	// FailureProbability is the share of closed decisions with a stale
	// block; StaleTokens the mean stale predicted tokens per closed decision.
	FailureProbability float64 `json:"failureProbability"`
	StaleTokens        float64 `json:"staleTokensPerDecision"`
	// Requests and Tokens are the exposure at the TTL given.
	Requests float64 `json:"requests"`
	Tokens   float64 `json:"tokens"`
}

// exposureOf measures rate and failures from a window's tally over elapsed
// and prices them at ttl.
func exposureOf(t *tally, elapsed, ttl time.Duration) Exposure {
	var e Exposure
	if elapsed > 0 {
		e.Rate = float64(t.begun) / elapsed.Seconds()
	}
	if t.closed > 0 {
		e.FailureProbability = float64(t.failed) / float64(t.closed)
		e.StaleTokens = float64(t.staleTokens) / float64(t.closed)
	}
	return e.at(ttl)
}

// at returns e re-priced at another TTL.
func (e Exposure) at(ttl time.Duration) Exposure {
	e.Requests = e.Rate * e.FailureProbability * ttl.Seconds()
	e.Tokens = e.Rate * e.StaleTokens * ttl.Seconds()
	return e
}

// slackRatio is how much of the room the TTL leaves above Lq the backlog
// takes: near 1 the next burst eats into the percentile itself.
func slackRatio(current, lq, backlog time.Duration) float64 {
	slack := current - lq
	switch {
	case backlog <= 0:
		return 0
	case slack <= 0:
		return math.Inf(1)
	}
	return backlog.Seconds() / slack.Seconds()
}

// adaptStep moves cur towards target by at most step, not at all when the
// gap is within the hysteresis band, and keeps it within [lo, hi].
func adaptStep(cur, target, step, band, lo, hi time.Duration) time.Duration {
	diff := target - cur
	if diff <= band && diff >= -band {
		return min(max(cur, lo), hi)
	}
	next := cur + min(max(diff, -step), step)
	return min(max(next, lo), hi)
}
