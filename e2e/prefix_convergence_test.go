package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/internal/testwait"
	"github.com/warmroute/warmroute/router"
)

// TestIndexConvergence checks that after traffic the router's confirmed
// entries per endpoint are exactly each simulator's true block set, and that
// this holds again after NATS, a relay, a simulator (in-process and real
// restart) and the router are each restarted in turn.
func TestIndexConvergence(t *testing.T) {
	natsd, err := buildNATSD()
	if err != nil {
		t.Fatal(err)
	}
	ps := newPrefixStack(t, harness.PrefixOptions{NATSD: natsd, JetStream: true,
		Configure: func(c *router.Config) {
			// Sources outlive a NATS restart (40 x 250ms heartbeats), so
			// the router keeps what it knew instead of expiring it.
			c.Events.HeartbeatMisses = 40
		}})
	ctx := context.Background()
	round := 0
	traffic := func() {
		round++
		for i := range 6 {
			complete(t, ps, fmt.Sprintf("%s round %d", words(fmt.Sprintf("conv%d", i), 30), round), nil)
		}
		complete(t, ps, words(fmt.Sprintf("fresh%d", round), 30), nil)
	}
	traffic()
	waitConverged(t, ps, "initial traffic")

	t.Run("nats restart", func(t *testing.T) {
		if err := ps.NATS.Stop(); err != nil {
			t.Fatal(err)
		}
		if err := ps.NATS.Restart(ctx); err != nil {
			t.Fatal(err)
		}
		waitRelaysHeard(t, ps)
		traffic()
		waitConverged(t, ps, "after NATS restart")
	})
	t.Run("sim debug restart", func(t *testing.T) {
		s := ps.EventSims[1]
		if err := s.DebugRestart(ctx); err != nil {
			t.Fatal(err)
		}
		// An engine restarted in place keeps its sockets and sends nothing
		// until its next batch, whose sequence number (back at 0) is what
		// tells the relay to start the stream over. One request straight to
		// it makes that batch: through the router it would reach this engine
		// only by the draw among equally loaded ones (or a load heartbeat
		// arriving first), so the convergence check raced that draw.
		if r, err := do(ctx, http.MethodPost, "http://"+s.Addr+"/v1/completions",
			mustJSON(t, completionRequest(words("restarted", 30), false)), nil); err != nil || r.status != http.StatusOK {
			t.Fatalf("request to the restarted simulator: %+v, %v", r.status, err)
		}
		traffic()
		waitConverged(t, ps, "after POST /debug/restart")
	})
	t.Run("sim process restart", func(t *testing.T) {
		s, r := ps.EventSims[2], ps.Relays[2]
		before := relayReconnects(t, r)
		if err := s.Restart(ctx); err != nil {
			t.Fatal(err)
		}
		// Traffic before the relay resubscribed would be lost on the wire
		// with nothing to replay it, so wait for the reconnect.
		testwait.Until(t, 10*time.Second, func() string {
			if relayReconnects(t, r) <= before {
				return "relay did not reconnect to the restarted simulator"
			}
			return ""
		})
		traffic()
		waitConverged(t, ps, "after simulator process restart")
	})
	t.Run("relay restart", func(t *testing.T) {
		// A relay that stops cleanly says it is leaving, and the router then
		// forgets the endpoint's blocks. The restarted relay replays the
		// engine's buffer from seq 0, so the router regains the exact view
		// without new traffic.
		s := ps.EventSims[0]
		if err := ps.Relays[0].Stop(); err != nil {
			t.Fatal(err)
		}
		testwait.Until(t, 5*time.Second, func() string {
			if n, err := ps.Router.IndexEntries(ctx, s.Addr); err != nil || n.Confirmed != 0 {
				return fmt.Sprintf("router still holds %+v (%v) for %s after its relay left", n, err, s.ID)
			}
			return ""
		})
		if err := ps.Relays[0].Restart(ctx); err != nil {
			t.Fatal(err)
		}
		waitRelaysHeard(t, ps)
		waitConverged(t, ps, "after relay restart")
	})
	t.Run("router restart replays jetstream", func(t *testing.T) {
		if err := ps.Router.Stop(); err != nil {
			t.Fatal(err)
		}
		if err := ps.Router.Restart(ctx); err != nil {
			t.Fatal(err)
		}
		waitConverged(t, ps, "after router restart, before new traffic")
		waitRelaysHeard(t, ps)
		traffic()
		waitConverged(t, ps, "after router restart and new traffic")
	})
}

func relayReconnects(t *testing.T, r *harness.Relay) float64 {
	t.Helper()
	m, err := harness.Scrape(context.Background(), "http://"+r.AdminAddr+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	return m.Sum("warmroute_events_relay_engine_reconnects_total", nil)
}

// waitRelaysHeard waits until the router heard every relay after now.
func waitRelaysHeard(t *testing.T, ps *harness.PrefixStack) {
	t.Helper()
	if err := ps.WaitSources(context.Background(), time.Now()); err != nil {
		t.Fatal(err)
	}
}

// waitConverged polls until, for every simulator (or each of sims), the router's confirmed
// entries equal the simulator's distinct cached blocks and every cached
// chain is confirmed in full on that simulator's endpoint: the router holds
// every true block and, by the count, nothing else.
func waitConverged(t *testing.T, ps *harness.PrefixStack, when string, sims ...*harness.EventSim) {
	t.Helper()
	if sims == nil {
		sims = ps.EventSims
	}
	testwait.Until(t, 10*time.Second, func() string {
		for _, s := range sims {
			if why := divergence(t, ps, s); why != "" {
				return when + ": " + why
			}
		}
		return ""
	})
}

func divergence(t *testing.T, ps *harness.PrefixStack, s *harness.EventSim) string {
	ctx := context.Background()
	c, err := s.Cache(ctx)
	if err != nil {
		return err.Error()
	}
	got, err := ps.Router.IndexEntries(ctx, s.Addr)
	if err != nil {
		return err.Error()
	}
	if got.Confirmed != c.Distinct() {
		return fmt.Sprintf("router holds %d confirmed blocks for %s, the simulator caches %d", got.Confirmed, s.ID, c.Distinct())
	}
	chains, orphans := c.LeafChains()
	if orphans > 0 {
		t.Fatalf("%s caches %d blocks whose parent is not cached; size the cache so nothing is evicted", s.ID, orphans)
	}
	for _, chain := range chains {
		if m := lookupOn(t, ps, chain, s.Addr); m.Confirmed != len(chain)/s.BlockSize {
			return fmt.Sprintf("router holds %d of a %d-block cached chain on %s", m.Confirmed, len(chain)/s.BlockSize, s.ID)
		}
	}
	return ""
}
