package ttl

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

type seriesKey struct{ endpoint, model string }

// series is what the controller measures and sets for one (endpoint, model)
// pair, and for the overall pool. Its window is guarded by mu; current is
// read lock-free on the TTL hot path.
type series struct {
	key     seriesKey
	current atomic.Int64 // TTL in ns
	m       seriesMetrics

	mu  sync.Mutex
	win window
}

// latencySample is what an outcome adds to a series' latency histograms.
type latencySample struct {
	class  promptClass
	block  int // 0 first, 1 last
	ending int // index of latencyEndings: 0 confirmed on time, 1 early_expiry
	d      time.Duration
}

// record adds one outcome's tallies and, when the decision closed with a
// confirmation, its last-block latency to the advisor window.
func (s *series) record(now int64, t *tally, latency time.Duration, sampled bool) {
	s.mu.Lock()
	s.win.bucket(now).add(t)
	if sampled {
		s.win.observe(now, latency)
	}
	s.mu.Unlock()
}

func (s *series) sum(now int64) (tally, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.win.sum(now), s.win.elapsed(now)
}

func (s *series) latencies(dst []time.Duration, now int64) []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.win.latencies(dst, now)
}

// observeLatency feeds the histogram child for l, binding it on first use.
func (s *series) observeLatency(m *Metrics, replica string, l latencySample) {
	s.mu.Lock()
	h := s.m.hist[l.class][l.block][l.ending]
	if h == nil {
		h = m.latency.WithLabelValues(s.key.endpoint, s.key.model, l.class.String(), replica,
			[2]string{"first", "last"}[l.block], latencyEndings[l.ending])
		s.m.hist[l.class][l.block][l.ending] = h
	}
	s.mu.Unlock()
	h.Observe(l.d.Seconds())
}

// seriesSet finds or creates series. It holds at most max pairs; later pairs
// share one "_other" series so metric labels stay bounded whatever strings
// callers pass.
type seriesSet struct {
	m       *Metrics
	static  time.Duration
	samples int
	width   time.Duration
	max     int

	byKey sync.Map // seriesKey -> *series
	mu    sync.Mutex
	n     int
	all   *series
	other *series
	// spilled is set once other has been handed out, so it is only
	// reported when used.
	spilled atomic.Bool
}

func newSeriesSet(m *Metrics, c *settings) *seriesSet {
	set := &seriesSet{m: m, static: c.Static.D(), samples: c.WindowSamples, width: c.Window, max: c.MaxSeries}
	set.all = set.make(seriesKey{labelAll, labelAll}, 4*c.WindowSamples)
	set.other = set.make(seriesKey{labelOther, labelOther}, c.WindowSamples)
	return set
}

func (set *seriesSet) make(k seriesKey, samples int) *series {
	s := &series{key: k, m: set.m.bind(k.endpoint, k.model), win: newWindow(set.width, samples)}
	s.current.Store(int64(set.static))
	return s
}

func (set *seriesSet) get(endpoint, model string) *series {
	k := seriesKey{endpoint, model}
	if s, ok := set.byKey.Load(k); ok {
		return s.(*series)
	}
	set.mu.Lock()
	defer set.mu.Unlock()
	if s, ok := set.byKey.Load(k); ok {
		return s.(*series)
	}
	if set.n >= set.max {
		set.spilled.Store(true)
		return set.other
	}
	s := set.make(k, set.samples)
	set.byKey.Store(k, s)
	set.n++
	return s
}

// each calls f for every series, the overall one last.
func (set *seriesSet) each(f func(*series)) {
	set.byKey.Range(func(_, v any) bool {
		f(v.(*series))
		return true
	})
	if set.spilled.Load() {
		f(set.other)
	}
	f(set.all)
}

// gaugeChildren are a series' gauges; they are looked up per Run tick, not
// on hot paths, so they are not bound in advance.
func (m *Metrics) gauges(k seriesKey) [7]prometheus.Gauge {
	return [7]prometheus.Gauge{
		m.current.WithLabelValues(k.endpoint, k.model),
		m.advised.WithLabelValues(k.endpoint, k.model),
		m.quantile.WithLabelValues(k.endpoint, k.model),
		m.slackUsed.WithLabelValues(k.endpoint, k.model),
		m.exposureReq.WithLabelValues(k.endpoint, k.model),
		m.exposureTok.WithLabelValues(k.endpoint, k.model),
		m.trust.WithLabelValues(k.endpoint, k.model),
	}
}
