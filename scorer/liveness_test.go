package scorer

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/warmroute/warmroute/index"
)

// downSet is a Liveness over a mutable set of down endpoints.
type downSet struct {
	mu   sync.Mutex
	down map[string]string
}

func (d *downSet) Down(ep string) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	r, ok := d.down[ep]
	return r, ok
}

func (d *downSet) set(ep, reason string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if reason == "" {
		delete(d.down, ep)
		return
	}
	d.down[ep] = reason
}

// TestDownEndpointIsNoCandidate: an endpoint whose engine is down gets no
// request, not even for the prefix it holds confirmed; when every endpoint
// is down the pool has none to offer; back up, it is a candidate again.
func TestDownEndpointIsNoCandidate(t *testing.T) {
	ix, err := index.New(index.Options{BlockSize: bs})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	lv := &downSet{down: map[string]string{}}
	p := &pipe{ix: ix, load: &Load{}, pol: &policy{ttl: 0, trust: 1}}
	p.s = New(NewPools(pipePools, ""), p.load, Options{Index: ix, Tokens: map[string]Tokens{"m": idTokens{}},
		TTL: p.pol, Metrics: m, Liveness: lv})
	ids := prompt(3, 8*bs)
	const holder = "10.0.0.2:8000"
	p.store(t, holder, ids, index.Identity{Model: "m"})
	if d := p.pick(t, completion(ids)); d.Endpoint != holder {
		t.Fatalf("live holder not chosen: %s (%s)", d.Endpoint, d.Reason)
	}
	lv.set(holder, "disconnected")
	for range 20 {
		d := p.pick(t, completion(ids))
		if d.Endpoint == holder {
			t.Fatalf("down endpoint chosen: %s", d.Reason)
		}
		for _, fb := range d.Fallbacks {
			if fb == holder {
				t.Fatalf("down endpoint offered as a fallback: %v", d.Fallbacks)
			}
		}
	}
	if got := testutil.ToFloat64(m.excluded.WithLabelValues("disconnected")); got != 20 {
		t.Fatalf("excluded{disconnected} = %v, want 20", got)
	}
	for _, ep := range pipePools[0].Endpoints {
		lv.set(ep, "expired")
	}
	if _, err := p.s.Pick(context.Background(), completion(ids)); !errors.Is(err, ErrNoEndpoint) {
		t.Fatalf("every endpoint down: err %v, want ErrNoEndpoint", err)
	}
	if n, err := testutil.GatherAndCount(reg, "warmroute_scorer_endpoints"); err != nil || n != 3 {
		t.Fatalf("endpoints series %d, %v; want live, down and syncing for the pool", n, err)
	}
	if got := gaugeWith(t, reg, "warmroute_scorer_endpoints", "state", "down"); got != float64(len(pipePools[0].Endpoints)) {
		t.Fatalf("down endpoints gauge %v, want %d", got, len(pipePools[0].Endpoints))
	}
	for _, ep := range pipePools[0].Endpoints {
		lv.set(ep, "")
	}
	if d := p.pick(t, completion(ids)); d.Endpoint != holder {
		t.Fatalf("holder back up not chosen: %s (%s)", d.Endpoint, d.Reason)
	}
}

// gaugeWith reads the gauge name whose label has value from reg.
func gaugeWith(t *testing.T, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if mf.GetName() == name && lp.GetName() == label && lp.GetValue() == value {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatalf("%s{%s=%q} not exported", name, label, value)
	return 0
}

// syncSet is a downSet that also reports syncing endpoints.
type syncSet struct {
	downSet
	syncing map[string]bool
}

func (s *syncSet) Syncing(ep string) bool { return s.syncing[ep] }

// TestSyncingEndpointsState: an endpoint excluded while it syncs (reason
// syncing) and one syncing while live both count as syncing, not as down
// or live; only the first is excluded.
func TestSyncingEndpointsState(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	eps := pipePools[0].Endpoints
	lv := &syncSet{downSet: downSet{down: map[string]string{eps[0]: reasonSyncing, eps[1]: "expired"}},
		syncing: map[string]bool{eps[0]: true, eps[2]: true}}
	ix, err := index.New(index.Options{BlockSize: bs})
	if err != nil {
		t.Fatal(err)
	}
	s := New(NewPools(pipePools, ""), &Load{}, Options{Index: ix, Tokens: map[string]Tokens{"m": idTokens{}},
		Metrics: m, Liveness: lv})
	for _, c := range []struct {
		state string
		want  int
	}{{"syncing", 2}, {"down", 1}, {"live", len(eps) - 3}} {
		if got := gaugeWith(t, reg, "warmroute_scorer_endpoints", "state", c.state); got != float64(c.want) {
			t.Errorf("endpoints{state=%s} = %v, want %d", c.state, got, c.want)
		}
	}
	if got := s.live(eps); len(got) != len(eps)-2 {
		t.Fatalf("candidates %v: want all but the excluded syncing and the expired one", got)
	}
}
