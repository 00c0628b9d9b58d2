package e2e

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/index/ttl"
	"github.com/warmroute/warmroute/internal/testwait"
	"github.com/warmroute/warmroute/router"
)

// injected is the event delay the simulators add: every batch reaches the
// wire base plus a uniform [0, jitter] later.
type injected struct{ base, jitter time.Duration }

// quantile is the q-th quantile (0..1) of the injected delay.
func (d injected) quantile(q float64) time.Duration {
	return d.base + time.Duration(q*float64(d.jitter))
}

// medianSlack is four standard deviations of the median of n uniform
// samples over the jitter: sd = jitter / (2 sqrt(n)).
func (d injected) medianSlack(n int) time.Duration {
	return time.Duration(4 * float64(d.jitter) / (2 * math.Sqrt(float64(n))))
}

// meanSlack is four standard deviations of the mean of n uniform samples
// over the jitter: sd = jitter / sqrt(12 n).
func (d injected) meanSlack(n int) time.Duration {
	return time.Duration(4 * float64(d.jitter) / math.Sqrt(12*float64(n)))
}

// pipelineSlack bounds what the route-to-confirmation latency adds to the
// injected delay on this shared 2-core machine: the simulator's prefill,
// relay, NATS and the router's apply loop. It only widens upper bounds.
const pipelineSlack = 80 * time.Millisecond

// tailSlack bounds the pipeline's worst sample among the measured ones (the
// maximum, and so the p99 of a small window): one scheduling hiccup on a
// loaded machine lands there, not in the median.
const tailSlack = 250 * time.Millisecond

// TestTTLMeasuresInjectedDelay drives traffic through simulators whose
// events are delayed by 150ms + U[0, 100ms] and checks that the router's
// measured route-to-confirmation latency is that distribution (from
// /debug/ttl and the latency histogram), and that the advisor's TTL covers
// the configured percentile of it.
func TestTTLMeasuresInjectedDelay(t *testing.T) {
	delay := injected{150 * time.Millisecond, 100 * time.Millisecond}
	const requests = 40
	ps := newPrefixStack(t, harness.PrefixOptions{Sims: 2,
		SimArgs: []string{"--event-delay", delay.base.String(), "--event-jitter", delay.jitter.String()},
		Configure: func(c *router.Config) {
			c.TTL.Mode, c.TTL.Percentile = ttl.ModeAdvise, "p95"
			c.TTL.MinSamples = requests - 5
			c.TTL.Interval = api.Duration(250 * time.Millisecond)
		}})
	before := routerMetrics(t, ps.Router)
	// A batch never overtakes an earlier one of its simulator, which would
	// skew the delay upwards; requests further apart than the jitter (plus
	// the decode batch a request may add) cannot be held back that way.
	tick := time.NewTicker(delay.jitter + 30*time.Millisecond)
	defer tick.Stop()
	for i := range requests {
		if _, status := send(t, ps.URL("/v1/completions"), words(fmt.Sprintf("lat%d", i), 30), nil); status != 200 {
			t.Fatalf("request %d answered %d", i, status)
		}
		<-tick.C
	}
	var rep ttl.Report
	testwait.Until(t, 10*time.Second, func() string {
		rep = ttlReport(t, ps.Router)
		if a := rep.Overall.Advice; !a.Ready || a.Samples < requests {
			return fmt.Sprintf("advice %+v: want ready with %d samples", a, requests)
		}
		return ""
	})
	t.Logf("overall advice: %+v", rep.Overall.Advice)
	checkMeasured(t, delay, requests, rep.Overall.Advice)
	checkAdvice(t, delay, rep.Overall.Advice)
	checkHistogram(t, delay, requests, before, routerMetrics(t, ps.Router))
	for _, s := range ps.EventSims {
		row, ok := rowFor(rep, s.Addr)
		if !ok || row.Endings.Confirmed == 0 || row.Endings.EarlyExpiry+row.Endings.StaleExpiry != 0 {
			t.Errorf("row for %s: %+v (found %v), want confirmations only", s.Addr, row.Endings, ok)
		}
	}
}

// checkMeasured compares the measured distribution with the injected one.
func checkMeasured(t *testing.T, d injected, n int, a ttl.Advice) {
	t.Helper()
	p50lo, p50hi := d.quantile(0.5)-d.medianSlack(n), d.quantile(0.5)+d.medianSlack(n)+pipelineSlack
	if p50 := a.P50.D(); p50 < p50lo || p50 > p50hi {
		t.Errorf("measured p50 %v, want the injected median %v within [%v, %v]", p50, d.quantile(0.5), p50lo, p50hi)
	}
	// With n samples the largest is below the 75th percentile of the
	// injected delay with probability 0.75^n (1e-5 for n = 40).
	maxLo, maxHi := d.quantile(0.75), d.quantile(1)+tailSlack
	if m := a.Max.D(); m < maxLo || m > maxHi {
		t.Errorf("measured max %v, want within [%v, %v] (injected max %v)", m, maxLo, maxHi, d.quantile(1))
	}
}

// checkAdvice: the advised TTL covers the configured percentile (p95) of the
// injected delay and is the documented Lq + backlog + jitter, not the cap.
func checkAdvice(t *testing.T, d injected, a ttl.Advice) {
	t.Helper()
	if a.Capped {
		t.Errorf("advice capped: %+v", a)
	}
	if want := d.quantile(0.95); a.TTL.D() < want || a.Quantile.D() < want-d.medianSlack(20) {
		t.Errorf("advised TTL %v (Lq %v) does not cover the injected p95 %v", a.TTL, a.Quantile, want)
	}
	sum := a.Quantile.D() + a.Backlog.D() + a.Jitter.D()
	if a.TTL.D() < sum || a.TTL.D() >= sum+ttl.Resolution {
		t.Errorf("advised TTL %v, want Lq %v + backlog %v + jitter %v rounded up to %v", a.TTL, a.Quantile, a.Backlog, a.Jitter, ttl.Resolution)
	}
	if hi := d.quantile(1) + tailSlack + a.Backlog.D() + a.Jitter.D() + ttl.Resolution; a.TTL.D() > hi {
		t.Errorf("advised TTL %v exceeds %v: more than the injected delay explains", a.TTL, hi)
	}
}

// checkHistogram reads the last-block latencies from the histogram: every
// sample between the injected bounds, and the mean the injected mean.
func checkHistogram(t *testing.T, d injected, n int, before, after harness.Metrics) {
	t.Helper()
	last := map[string]string{"block": "last", "ending": "confirmed"}
	c0, s0 := histogram(before, latencyMetric, last)
	c1, s1 := histogram(after, latencyMetric, last)
	count, sum := c1-c0, s1-s0
	if count < uint64(n) {
		t.Fatalf("%s%v counted %d samples, want >= %d", latencyMetric, last, count, n)
	}
	mean := time.Duration(sum / float64(count) * float64(time.Second))
	lo, hi := d.quantile(0.5)-d.meanSlack(n), d.quantile(0.5)+d.meanSlack(n)+pipelineSlack
	if mean < lo || mean > hi {
		t.Errorf("histogram mean %v over %d samples, want the injected mean %v within [%v, %v]", mean, count, d.quantile(0.5), lo, hi)
	}
	if below := bucketCount(after, last, 0.1) - bucketCount(before, last, 0.1); below != 0 {
		t.Errorf("%d confirmations within 100ms, faster than the injected minimum %v", below, d.base)
	}
}

// bucketCount is the cumulative count of the histogram bucket le.
func bucketCount(m harness.Metrics, match map[string]string, le float64) uint64 {
	var n uint64
	for _, s := range m[latencyMetric].GetMetric() {
		if !labelsInclude(s.GetLabel(), match) || labelsInclude(s.GetLabel(), map[string]string{"endpoint": "_all"}) {
			continue
		}
		for _, b := range s.GetHistogram().GetBucket() {
			if b.GetUpperBound() == le {
				n += b.GetCumulativeCount()
			}
		}
	}
	return n
}
