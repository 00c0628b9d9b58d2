package ttl

import (
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/warmroute/warmroute/index"
)

// Controller measures speculative entries from routing decision to
// confirmation, advises a TTL from that distribution, sets it (statically,
// or adaptively in small steps) and pauses speculation for endpoints whose
// event stream cannot be trusted.
//
// It is safe for concurrent use. TTL and Trust are called on the request
// path, Begin on commit, Usage at response end, Observe on the event
// goroutine (as the index's Observer); none of them blocks or does I/O. Run
// recomputes advice periodically. The zero value is not usable; call New.
type Controller struct {
	cfg      settings
	pct      Percentile
	now      func() time.Time
	log      *slog.Logger
	metrics  *Metrics
	series   *seriesSet
	guard    *guard
	backlog  *backlogPeak
	shards   [decisionShards]decisionShard
	perShard int
	// lifeSpan and usageSpan are how long after its decision a record is
	// kept for outcomes and for usage.
	lifeSpan, usageSpan time.Duration

	tickMu    sync.Mutex // serializes step
	newTicker func(time.Duration) (<-chan time.Time, func())
}

// New validates opts and fills defaults.
func New(opts Options) (*Controller, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	cfg := opts.resolve()
	pct, _ := ParsePercentile(cfg.Percentile) // validated above
	m := opts.Metrics
	if m == nil {
		m, _ = NewMetrics(nil) // registers nothing, so cannot fail
	}
	c := &Controller{cfg: cfg, pct: pct, now: opts.Now, log: opts.Logger, metrics: m}
	if c.now == nil {
		c.now = time.Now
	}
	if c.log == nil {
		c.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	c.series = newSeriesSet(c.metrics, &cfg)
	c.guard = newGuard(opts.Freshness, opts.Endpoints, cfg.MaxSeries, c.metrics, c.log)
	c.guard.setSilentBase(cfg.Static.D())
	c.backlog = newBacklogPeak(opts.Backlog, cfg.Window)
	c.perShard = (cfg.MaxDecisions + decisionShards - 1) / decisionShards
	for i := range c.shards {
		c.shards[i].byID = map[index.DecisionID]*decision{}
	}
	c.lifeSpan = cfg.MaxStale.D() + cfg.Grace + decisionMargin
	c.usageSpan = c.lifeSpan + cfg.UsageTimeout
	c.newTicker = func(d time.Duration) (<-chan time.Time, func()) {
		t := time.NewTicker(d)
		return t.C, t.Stop
	}
	return c, nil
}

// Config returns the configuration in force, defaults filled in.
func (c *Controller) Config() Config { return c.cfg.Config }

// TTL is the lifetime to give new speculative entries for endpoint and
// model: 0 while the freshness guard pauses the endpoint (insert nothing,
// trust nothing), the configured static TTL in static and advise modes, and
// the pair's adapted TTL in adaptive mode.
func (c *Controller) TTL(endpoint, model string) time.Duration {
	if c.guard.paused(endpoint, c.now()) {
		return 0
	}
	if c.cfg.Mode != ModeAdaptive {
		return c.cfg.Static.D()
	}
	return time.Duration(c.series.get(endpoint, model).current.Load())
}

// Trust is the weight, in [0,1], of endpoint's speculative blocks for model:
// the share of its resolved predictions confirmed (on time or late) over the
// window; 1 until MinSamples blocks were resolved; 0 while paused.
func (c *Controller) Trust(endpoint, model string) float64 {
	now := c.now()
	if c.guard.paused(endpoint, now) {
		return 0
	}
	t, _ := c.series.get(endpoint, model).sum(now.UnixNano())
	return trustOf(&t, c.cfg.MinSamples)
}

func trustOf(t *tally, minSamples int) float64 {
	n := t.resolved()
	if n == 0 || n < int64(minSamples) {
		return 1
	}
	return float64(t.confirmed+t.late) / float64(n)
}

func (c *Controller) shard(id index.DecisionID) *decisionShard {
	return &c.shards[uint64(id)%decisionShards]
}
