package ttl

import "github.com/warmroute/warmroute/index"

// closing is what one outcome did to its decision, worked out under the
// shard lock and reported after it is released.
type closing struct {
	first, last       latencySample
	hasFirst, hasLast bool // hasLast also means last.d goes to the advisor
	closed            bool
	tally             tally
}

// apply adds o to d.
func (d *decision) apply(o index.Outcome, cl *closing) {
	switch o.Kind {
	case index.Confirmed, index.EarlyExpiry:
		late := 0
		if o.Kind == index.EarlyExpiry {
			late = 1
		}
		if d.confirmed == 0 {
			cl.first, cl.hasFirst = latencySample{class: d.class, block: 0, ending: late, d: o.Latency}, true
		}
		d.confirmed += o.Blocks
		d.last, d.lastLate = o.Latency, late == 1
	case index.StaleExpiry:
		d.stale += o.Blocks
	}
	d.ended += o.Blocks
	if d.ended < d.route.NewSpeculative {
		return
	}
	d.lifeOpen = false
	cl.closed = true
	cl.tally.closed = 1
	if d.stale > 0 {
		cl.tally.failed = 1
		cl.tally.staleTokens = int64(d.stale) * int64(max(d.route.BlockSize, 0))
	}
	if d.confirmed > 0 {
		ending := 0
		if d.lastLate {
			ending = 1
		}
		cl.last, cl.hasLast = latencySample{class: d.class, block: 1, ending: ending, d: d.last}, true
	}
}

// Observe accounts one outcome reported by the index. It implements
// index.Observer: pass the Controller as index.Options.Observer. Outcomes of
// local decisions this controller did not Begin (a full table, or a decision
// already forgotten) still count as endings and towards trust, under the
// model "_unknown". Outcomes of another replica's predictions (o.Remote) are
// ignored: the deciding replica accounts for them, so counting them here too
// would count each ending once per replica, and their decision id may even
// equal a local one.
func (c *Controller) Observe(o index.Outcome) {
	if o.Blocks <= 0 || o.Remote {
		return
	}
	now := c.now().UnixNano()
	var cl closing
	var s *series
	sh := c.shard(o.Decision)
	sh.mu.Lock()
	if d := sh.byID[o.Decision]; d != nil && d.lifeOpen && d.route.Endpoint == o.Endpoint {
		s = d.s
		d.apply(o, &cl)
		if cl.closed {
			sh.forgetOrWait(o.Decision, d)
		}
	}
	sh.mu.Unlock()
	if s == nil {
		s = c.series.get(o.Endpoint, labelUnknown)
	}
	cl.tally.addEnding(o.Kind, o.Blocks)
	c.record(s, now, &cl.tally, cl.last.d, cl.hasLast)
	if int(o.Kind) < len(s.m.endings) {
		s.m.endings[o.Kind].Add(float64(o.Blocks))
	}
	if cl.hasFirst {
		s.observeLatency(c.metrics, c.cfg.Replica, cl.first)
	}
	if cl.hasLast {
		s.observeLatency(c.metrics, c.cfg.Replica, cl.last)
	}
}

func (t *tally) addEnding(k index.OutcomeKind, blocks int) {
	n := int64(blocks)
	switch k {
	case index.Confirmed:
		t.confirmed += n
	case index.EarlyExpiry:
		t.late += n
	case index.StaleExpiry:
		t.stale += n
	default:
		t.dropped += n
	}
}
