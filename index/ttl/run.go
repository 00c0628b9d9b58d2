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
	if !target.Ready {
		return
	}
	cur := time.Duration(s.current.Load())
	next := adaptStep(cur, target.TTL.D(), c.cfg.Step.D(), c.cfg.Hysteresis, c.cfg.Min, c.cfg.MaxStale.D())
	if next != cur {
		s.current.Store(int64(next))
		r.Current = api.Duration(next)
		r.Exposure = r.Exposure.at(next)
		r.BacklogSlackRatio = finite(slackRatio(next, r.Advice.Quantile.D(), r.Advice.Backlog.D()))
		c.log.Debug("moving speculative ttl", "endpoint", s.key.endpoint, "model", s.key.model,
			"from", cur, "to", next, "advised", target.TTL.D())
	}
}

// silentBase is the confirmation latency the silent rule waits for: the
// advised TTL once advice is ready, else the TTL in force.
func silentBase(overall *Row) time.Duration {
	if overall.Advice.Ready {
		return overall.Advice.TTL.D()
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
