package ttl

import (
	"time"

	"github.com/warmroute/warmroute/index"
)

// Begin starts the route-to-confirmation clock of a committed decision. A
// route that neither created entries nor used a prediction has nothing to
// follow and is ignored. When the table is full the decision is counted and
// not tracked: its outcomes still count as endings, unattributed.
func (c *Controller) Begin(id index.DecisionID, r Route) {
	if r.NewSpeculative <= 0 && r.MatchedSpeculative <= 0 {
		return
	}
	if r.At.IsZero() {
		r.At = c.now()
	}
	if r.NewSpeculative > 0 {
		c.guard.routed(r.Endpoint, r.At)
	}
	s := c.series.get(r.Endpoint, r.Model)
	at := r.At.UnixNano()
	d := &decision{route: r, s: s, class: classOf(r.PromptTokens),
		lifeOpen: r.NewSpeculative > 0, usageWait: r.MatchedSpeculative > 0,
		lifeEnd: at + int64(c.lifeSpan), usageEnd: at + int64(c.usageSpan)}
	sh := c.shard(id)
	var gone expired
	sh.mu.Lock()
	sh.sweep(c.now().UnixNano(), &gone)
	tracked := len(sh.byID) < c.perShard
	if tracked {
		sh.byID[id] = d
		if d.lifeOpen {
			sh.life.push(deadline{id, d.lifeEnd})
		} else {
			sh.usage.push(deadline{id, d.usageEnd})
		}
	}
	sh.mu.Unlock()
	c.account(&gone)
	if !tracked {
		c.metrics.tableDrops.WithLabelValues("full").Inc()
		return
	}
	if r.NewSpeculative > 0 {
		c.record(s, at, &tally{begun: 1}, 0, false)
	}
}

// record adds t, and a latency for the advisor when sampled, to s and to
// the overall series.
func (c *Controller) record(s *series, now int64, t *tally, latency time.Duration, sampled bool) {
	s.record(now, t, latency, sampled)
	if s != c.series.all {
		c.series.all.record(now, t, latency, sampled)
	}
}

// account counts what a sweep forgot.
func (c *Controller) account(g *expired) {
	if g.unfinished > 0 {
		c.metrics.tableDrops.WithLabelValues("expired").Add(float64(g.unfinished))
	}
	for _, d := range g.noUsage {
		d.s.m.routes[resultUnknown].Inc()
	}
}

// sweep forgets every shard's expired decisions and reports how many are
// tracked.
func (c *Controller) sweep(now int64) int {
	n := 0
	for i := range c.shards {
		sh := &c.shards[i]
		var gone expired
		sh.mu.Lock()
		sh.sweep(now, &gone)
		n += len(sh.byID)
		sh.mu.Unlock()
		c.account(&gone)
	}
	c.metrics.decisions.Set(float64(n))
	return n
}

// Moved re-points a committed decision at the endpoint that really served
// it: the proxy used a fallback, so r (that endpoint, and the predictions
// made there) replaces the record Begin made for the chosen endpoint. The
// scorer withdraws the chosen endpoint's predictions first, so they end on
// that record as stale expiries; whatever the old record still waited for
// (blocks, usage) is dropped, and usage now judges the served route. Like
// Begin, a route with nothing to follow is not tracked.
func (c *Controller) Moved(id index.DecisionID, r Route) {
	sh := c.shard(id)
	sh.mu.Lock()
	delete(sh.byID, id)
	sh.mu.Unlock()
	c.Begin(id, r)
}
