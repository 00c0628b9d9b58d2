package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/internal/testwait"
	"github.com/warmroute/warmroute/router"
)

const pausedMetric = "warmroute_ttl_speculation_paused"

// TestFreshnessGuard cuts one simulator's event pipeline: its events are
// paused and its relay stopped, so neither batches nor heartbeats reach the
// router. The freshness guard must pause speculation for that endpoint
// alone, and resume it once the pipeline is back.
//
// Pausing events alone is not enough: the relay keeps heartbeating, and the
// guard treats a heartbeating relay whose engine is quiet as fresh (an idle
// engine publishes nothing either).
func TestFreshnessGuard(t *testing.T) {
	ps := newPrefixStack(t, harness.PrefixOptions{Configure: func(c *router.Config) {
		c.Events.HeartbeatMisses = 4 // a 1s silence limit at the relays' 250ms heartbeats
		// The guard re-judges every endpoint each round; short rounds make
		// the gauge follow quickly.
		c.TTL.Interval = api.Duration(250 * time.Millisecond)
	}})
	// A request pinned to each endpoint (through the gateway's subset hint)
	// makes the guard judge every endpoint.
	for i, s := range ps.EventSims {
		complete(t, ps, words(fmt.Sprintf("fresh%d", i), 20), map[string]string{"x-e2e-subset-hint": s.Addr})
	}
	victim, other := ps.EventSims[0], ps.EventSims[1]
	waitPaused(t, ps, victim.Addr, 0)
	ctx := context.Background()
	if err := victim.PauseEvents(ctx, true); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := ps.Relays[0].Stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("relay stopped in %v", time.Since(start))
	waitPaused(t, ps, victim.Addr, 1)
	t.Logf("paused after %v", time.Since(start))
	if v := pausedValue(t, ps, other.Addr); v != 0 {
		t.Fatalf("%s{endpoint=%s} = %v while only %s is cut, want 0", pausedMetric, other.Addr, v, victim.Addr)
	}
	if err := victim.PauseEvents(ctx, false); err != nil {
		t.Fatal(err)
	}
	if err := ps.Relays[0].Restart(ctx); err != nil {
		t.Fatal(err)
	}
	waitPaused(t, ps, victim.Addr, 0)
	t.Logf("resumed after %v", time.Since(start))
}

func pausedValue(t *testing.T, ps *harness.PrefixStack, endpoint string) float64 {
	t.Helper()
	m, err := harness.Scrape(context.Background(), ps.Router.MetricsURL())
	if err != nil {
		t.Fatal(err)
	}
	v, ok := m.Value(pausedMetric, map[string]string{"endpoint": endpoint})
	if !ok {
		return -1
	}
	return v
}

func waitPaused(t *testing.T, ps *harness.PrefixStack, endpoint string, want float64) {
	t.Helper()
	testwait.Until(t, 10*time.Second, func() string {
		if v := pausedValue(t, ps, endpoint); v != want {
			return fmt.Sprintf("%s{endpoint=%s} = %v, want %v", pausedMetric, endpoint, v, want)
		}
		return ""
	})
}
