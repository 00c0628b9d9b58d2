package ttl

import (
	"context"
	"math"
	"time"

	"github.com/warmroute/warmroute/api"
)

// Run recomputes advice every Interval until ctx is done, exporting it and,
// in adaptive mode, moving each TTL one bounded step towards it. It also
// samples the subscriber backlog, re-judges endpoint freshness and forgets
// expired decisions. Call it once; it returns nil when ctx is done.
func (c *Controller) Run(ctx context.Context) error {
	tick, stop := c.newTicker(c.cfg.Interval.D())
	defer stop()
	c.step(c.now())
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick:
			c.step(c.now())
		}
	}
}

// Step runs one periodic round at now, the work Run does every Interval:
// for callers that drive time themselves (a virtual-time simulation calls it
// every Interval of its own clock instead of calling Run). Do not use it
// beside Run.
func (c *Controller) Step(now time.Time) { c.step(now) }

// step is one advisor round at now.
func (c *Controller) step(now time.Time) {
	c.tickMu.Lock()
	defer c.tickMu.Unlock()
	backlog := c.backlog.sample(now)
	c.metrics.backlog.Set(backlog.Seconds())
	c.sweep(now.UnixNano())
	c.guard.refresh(now)
	overall, scratch := c.assess(c.series.all, now, backlog, nil)
	c.adapt(c.series.all, &overall, overall.Advice)
	c.guard.setSilentBase(silentBase(&overall))
	c.export(c.series.all, &overall)
	c.series.each(func(s *series) {
		if s == c.series.all {
			return
		}
		var r Row
		r, scratch = c.assess(s, now, backlog, scratch)
		c.adapt(s, &r, overall.Advice)
		c.export(s, &r)
	})
}

// adapt moves s one step towards its own advice or, without enough samples
// of its own, the overall advice. Without either the TTL stays where it
// is, and a paused endpoint's TTL is frozen: advice made while events cannot
// arrive measures the outage, not the event path.
func (c *Controller) adapt(s *series, r *Row, overall Advice) {
	if c.cfg.Mode != ModeAdaptive || r.Paused {
		return
	}
	target := r.Advice
	if !target.Ready {
		target = overall
	}
	cur := time.Duration(s.current.Load())
	goal := target.TTL.D()
	if !target.Ready {
		// Before advice is ready, confirmations later than the TTL already
		// prove it too short: raise it (never lower it) towards the longest
		// confirmation seen, so a slow event path does not lose its hits for
		// the whole warm-up.
		p, ok := c.provisional(&r.Advice, &overall)
		if !ok || p <= cur {
			return
		}
		goal = p
	}
	next := adaptStep(cur, goal, c.cfg.Step.D(), c.cfg.Hysteresis, c.cfg.Min, c.cfg.MaxStale.D())
	if next != cur {
		s.current.Store(int64(next))
		r.Current = api.Duration(next)
		r.Exposure = r.Exposure.at(next)
		r.BacklogSlackRatio = finite(slackRatio(next, r.Advice.Quantile.D(), r.Advice.Backlog.D()))
		c.log.Debug("moving speculative ttl", "endpoint", s.key.endpoint, "model", s.key.model,
			"from", cur, "to", next, "towards", goal, "advised", target.Ready)
	}
}

// provisional is the upward-only target used before advice is ready: the
// longest confirmation latency seen (own samples, else overall) plus backlog
// and jitter, rounded up and capped like advice; ok is false with fewer
// than provisionalSamples of MinSamples confirmations.
func (c *Controller) provisional(own, overall *Advice) (time.Duration, bool) {
	need := max(provisionalMin, c.cfg.MinSamples/provisionalShare)
	a := own
	if a.Samples < need {
		a = overall
	}
	if a.Samples < need {
		return 0, false
	}
	return min(roundUp(a.Max.D()+a.Backlog.D()+a.Jitter.D(), c.cfg.Resolution), c.cfg.MaxStale.D()), true
}

// A provisional raise needs a tenth of MinSamples confirmations, at least 5:
// enough that one straggler does not move the TTL, few enough to act within
// the warm-up.
const (
	provisionalShare = 10
	provisionalMin   = 5
)

// silentBase is the confirmation latency the silent rule waits for: the
// advised TTL once advice is ready; before, the TTL in force or the longest
// confirmation already seen plus jitter, whichever is longer (a TTL shorter
// than the event path must not make the guard pause a slow, working one).
func silentBase(overall *Row) time.Duration {
	a := &overall.Advice
	if a.Ready {
		return a.TTL.D()
	}
	if a.Samples > 0 {
		return max(overall.Current.D(), a.Max.D()+a.Jitter.D())
	}
	return overall.Current.D()
}

func (c *Controller) export(s *series, r *Row) {
	g := c.metrics.gauges(s.key)
	g[0].Set(r.Current.D().Seconds())
	g[1].Set(r.Advice.TTL.D().Seconds())
	g[2].Set(r.Advice.Quantile.D().Seconds())
	ratio := math.Inf(1)
	if r.BacklogSlackRatio != nil {
		ratio = *r.BacklogSlackRatio
	}
	g[3].Set(ratio)
	g[4].Set(r.Exposure.Requests)
	g[5].Set(r.Exposure.Tokens)
	g[6].Set(r.Trust)
}
