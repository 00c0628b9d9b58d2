package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/internal/testwait"
)

// TestRouterRestartWithoutJetStream: with no JetStream stream to replay, a
// restarted router gets every endpoint's blocks back from the relays'
// snapshots (real relay processes, a nats-server process that outlives the
// router): its confirmed entries equal each simulator's true block set
// before any new traffic, and new traffic continuing old chains keys them
// (no unknown parent).
func TestRouterRestartWithoutJetStream(t *testing.T) {
	natsd, err := buildNATSD()
	if err != nil {
		t.Fatal(err)
	}
	ps := newPrefixStack(t, harness.PrefixOptions{NATSD: natsd})
	ctx := context.Background()
	prompts := make([]string, 6)
	for i := range prompts {
		prompts[i] = words(fmt.Sprintf("snap%d", i), 40)
		complete(t, ps, prompts[i], nil)
	}
	waitConverged(t, ps, "initial traffic")

	if err := ps.Router.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := ps.Router.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	waitConverged(t, ps, "after the router restarted, before new traffic")
	// A simulator that holds no block is converged before its relay's
	// snapshot arrives: wait for every relay's start sync.
	testwait.Until(t, 20*time.Second, func() string {
		m, err := harness.Scrape(ctx, ps.Router.MetricsURL())
		if err != nil {
			return err.Error()
		}
		if got := m.Sum("warmroute_events_subscriber_syncs_total", map[string]string{"reason": "start", "result": "ok"}); got < float64(len(ps.EventSims)) {
			return fmt.Sprintf("syncs{start,ok} = %v, want one per relay (%d)", got, len(ps.EventSims))
		}
		return ""
	})
	for i, p := range prompts {
		complete(t, ps, p+fmt.Sprintf(" and a continuation %d", i), nil)
	}
	waitConverged(t, ps, "after continuing the old chains")
	m, err := harness.Scrape(ctx, ps.Router.MetricsURL())
	if err != nil {
		t.Fatal(err)
	}
	if up := m.Sum("warmroute_index_unknown_parent_total", nil); up != 0 {
		t.Fatalf("unknown parents after the restart: %v, want 0", up)
	}
}
