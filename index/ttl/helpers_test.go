package ttl

import (
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/internal/testclock"
)

// t0 is aligned to every window bucket used in tests, so bucket boundaries
// fall where the tests expect them.
var t0 = time.Unix(1_700_000_000, 0)

// freshness is an in-memory FreshnessSource.
// testSilenceLimit is the silence limit the fake freshness sources report,
// the subscriber's default (3 heartbeat misses of 2s) rounded down.
const testSilenceLimit = 5 * time.Second

type freshness struct {
	mu sync.Mutex
	m  map[string]Freshness
}

func (f *freshness) Freshness(ep string) (Freshness, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.m[ep]
	return v, ok
}

func (f *freshness) set(ep string, v Freshness) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[string]Freshness{}
	}
	f.m[ep] = v
}

// backlog is a fixed BacklogGauge.
type backlog time.Duration

func (b backlog) Backlog() time.Duration { return time.Duration(b) }

type harness struct {
	*Controller
	clk *testclock.Manual
	reg *prometheus.Registry
}

func newHarness(t testing.TB, cfg Config, mod ...func(*Options)) *harness {
	t.Helper()
	h := &harness{clk: testclock.New(t0), reg: prometheus.NewRegistry()}
	m, err := NewMetrics(h.reg)
	if err != nil {
		t.Fatalf("NewMetrics: %v", err)
	}
	o := Options{Config: cfg, Now: h.clk.Now, Metrics: m}
	for _, f := range mod {
		f(&o)
	}
	c, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h.Controller = c
	return h
}

func dur(d time.Duration) api.Duration { return api.Duration(d) }

// referenceLatencies is a route-to-confirmation latency distribution with
// a long tail, the README's worked example, as 100 samples:
// p50 180ms, p95 620ms, p99 1.15s (nearest rank), and one 3s straggler.
func referenceLatencies() []time.Duration {
	var l []time.Duration
	for range 50 {
		l = append(l, 180*time.Millisecond)
	}
	for range 45 {
		l = append(l, 620*time.Millisecond)
	}
	for range 4 {
		l = append(l, 1150*time.Millisecond)
	}
	return append(l, 3*time.Second)
}

// confirm runs one single-block decision to confirmation after latency,
// starting at the current clock; the clock is left where it was.
func (h *harness) confirm(id index.DecisionID, ep, model string, latency time.Duration, kind index.OutcomeKind) {
	h.Begin(id, Route{Endpoint: ep, Model: model, PromptTokens: 100, NewSpeculative: 1, BlockSize: 16, At: h.clk.Now()})
	h.Observe(index.Outcome{Kind: kind, Endpoint: ep, Decision: id, Blocks: 1, Latency: latency})
}

// feed confirms one decision per latency, ids from base.
func (h *harness) feed(base index.DecisionID, ep, model string, lat []time.Duration) {
	for i, l := range lat {
		kind := index.Confirmed
		if l > h.cfg.Static.D() {
			kind = index.EarlyExpiry
		}
		h.confirm(base+index.DecisionID(i), ep, model, l, kind)
	}
}

// metric finds the sample of name whose labels include want.
func (h *harness) metric(t testing.TB, name string, want map[string]string) *dto.Metric {
	t.Helper()
	fams, err := h.reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if hasLabels(m, want) {
				return m
			}
		}
	}
	return nil
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			n++
		}
	}
	return n == len(want)
}

// value reads a counter or gauge; -1 when absent.
func (h *harness) value(t testing.TB, name string, want map[string]string) float64 {
	t.Helper()
	m := h.metric(t, name, want)
	switch {
	case m == nil:
		return -1
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	t.Fatalf("%s is neither counter nor gauge", name)
	return 0
}

func near(a, b float64) bool {
	d := a - b
	return d < 1e-6 && d > -1e-6
}
