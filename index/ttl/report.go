package ttl

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/warmroute/warmroute/api"
)

// Endings counts a series' speculative blocks by how they ended, over the
// window.
type Endings struct {
	Confirmed   int64 `json:"confirmed"`
	EarlyExpiry int64 `json:"earlyExpiry"`
	StaleExpiry int64 `json:"staleExpiry"`
	Dropped     int64 `json:"dropped"`
}

// Row is one (endpoint, model) pair's measurements, advice and TTL.
type Row struct {
	Endpoint string `json:"endpoint"`
	Model    string `json:"model"`
	// Current is the TTL in force (before the freshness guard): the static
	// TTL in static and advise modes.
	Current     api.Duration `json:"current"`
	Paused      bool         `json:"paused,omitempty"`
	PauseReason string       `json:"pauseReason,omitempty"`
	Advice      Advice       `json:"advice"`
	Trust       float64      `json:"trust"`
	Endings     Endings      `json:"endings"`
	// Exposure is priced at Current, AdvisedExposure at the advised TTL.
	Exposure        Exposure `json:"exposure"`
	AdvisedExposure Exposure `json:"advisedExposure"`
	// BacklogSlackRatio is backlog / (Current - Lq); null when the TTL does
	// not even cover Lq, so any backlog eats into the percentile.
	BacklogSlackRatio *float64 `json:"backlogSlackRatio"`
}

// Report is the admin endpoint's view: configuration, the overall row and
// one row per (endpoint, model) pair.
type Report struct {
	At         time.Time    `json:"at"`
	Mode       Mode         `json:"mode"`
	Percentile string       `json:"percentile"`
	Static     api.Duration `json:"static"`
	MaxStale   api.Duration `json:"maxStale"`
	MinSamples int          `json:"minSamples"`
	Window     api.Duration `json:"window"`
	Backlog    api.Duration `json:"backlog"`
	Decisions  int          `json:"decisions"`
	Overall    Row          `json:"overall"`
	Rows       []Row        `json:"rows"`
}

func (c *Controller) advisor() advisor {
	return advisor{pct: c.pct, jitter: c.cfg.Jitter.D(), maxStale: c.cfg.MaxStale.D(),
		resolution: c.cfg.Resolution, minSamples: c.cfg.MinSamples}
}

// assess measures s at now without changing anything.
func (c *Controller) assess(s *series, now time.Time, backlog time.Duration, scratch []time.Duration) (Row, []time.Duration) {
	ns := now.UnixNano()
	scratch = s.latencies(scratch[:0], ns)
	a := c.advisor()
	r := Row{Endpoint: s.key.endpoint, Model: s.key.model, Advice: a.advise(scratch, backlog)}
	cur := c.cfg.Static.D()
	if c.cfg.Mode == ModeAdaptive {
		cur = time.Duration(s.current.Load())
	}
	r.Current = api.Duration(cur)
	if s != c.series.all {
		c.guard.paused(s.key.endpoint, now) // judges endpoints no request has asked about yet
		r.Paused, r.PauseReason = c.guard.status(s.key.endpoint)
	}
	t, elapsed := s.sum(ns)
	r.Endings = Endings{t.confirmed, t.late, t.stale, t.dropped}
	if !r.Paused {
		r.Trust = trustOf(&t, c.cfg.MinSamples)
	}
	r.Exposure = exposureOf(&t, elapsed, cur)
	r.AdvisedExposure = r.Exposure.at(r.Advice.TTL.D())
	r.BacklogSlackRatio = finite(slackRatio(cur, r.Advice.Quantile.D(), backlog))
	return r, scratch
}

// finite returns a pointer to v, or nil for infinity, which JSON cannot carry.
func finite(v float64) *float64 {
	if math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// Report measures every series now. It is safe to call at any time; it
// changes nothing.
func (c *Controller) Report() Report {
	now := c.now()
	rep := Report{At: now, Mode: c.cfg.Mode, Percentile: c.pct.String(), Static: c.cfg.Static,
		MaxStale: c.cfg.MaxStale, MinSamples: c.cfg.MinSamples, Window: api.Duration(c.cfg.Window),
		Backlog: api.Duration(c.backlog.peak()), Decisions: c.tracked()}
	var scratch []time.Duration
	c.series.each(func(s *series) {
		var r Row
		r, scratch = c.assess(s, now, rep.Backlog.D(), scratch)
		if s == c.series.all {
			rep.Overall = r
			return
		}
		rep.Rows = append(rep.Rows, r)
	})
	slices.SortFunc(rep.Rows, func(a, b Row) int {
		return cmp.Or(cmp.Compare(a.Endpoint, b.Endpoint), cmp.Compare(a.Model, b.Model))
	})
	return rep
}

func (c *Controller) tracked() int {
	n := 0
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		n += len(sh.byID)
		sh.mu.Unlock()
	}
	return n
}
