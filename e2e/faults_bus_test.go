package e2e

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/router"
)

// The long outage stands for the 30 s one: with 250 ms heartbeats and 4
// misses the router's silence limit is 1 s, and 6 s exceeds it six times,
// as 30 s exceeds the default 6 s limit five times.
const (
	shortOutage       = 2 * time.Second
	longOutage        = 6 * time.Second
	longOutageMisses  = 4
	partitionDuration = 3 * time.Second
	relayKillMisses   = 8 // a 2 s silence limit
)

func init() {
	faultCases = append(faultCases,
		faultCase{"NATS killed 2 s, external", func(t *testing.T, f *faultRun) { natsOutage(t, f, false, shortOutage) }},
		faultCase{"NATS killed 2 s, embedded (relays cut off)", func(t *testing.T, f *faultRun) { natsOutage(t, f, true, shortOutage) }},
		faultCase{"NATS killed 6 s (> 6x expiry), external", func(t *testing.T, f *faultRun) { natsOutage(t, f, false, longOutage) }},
		faultCase{"NATS killed 6 s (> 6x expiry), embedded (relays cut off)", func(t *testing.T, f *faultRun) { natsOutage(t, f, true, longOutage) }},
		faultCase{"relay kill -9 and restart", relayKill},
		faultCase{"relay partitioned past expiry", relayPartition},
		faultCase{"NATS cluster: a relay's node killed and restarted", func(t *testing.T, f *faultRun) { clusterNodeKill(t, f, 1) }},
		faultCase{"NATS cluster: the router's node killed and restarted", func(t *testing.T, f *faultRun) { clusterNodeKill(t, f, 0) }},
	)
}

// proxiedRelays makes every relay of a prefix stack reach NATS through one
// NATSProxy, started when the first relay asks for its URL.
type proxiedRelays struct {
	t     *testing.T
	once  sync.Once
	proxy *harness.NATSProxy
}

func (p *proxiedRelays) url(_ int, url string) string {
	p.once.Do(func() {
		var err error
		if p.proxy, err = harness.StartNATSProxy(strings.TrimPrefix(url, "nats://")); err != nil {
			p.t.Fatal(err)
		}
		p.t.Cleanup(func() { _ = p.proxy.Close() })
	})
	return p.proxy.URL()
}

// natsOutage takes NATS away for outage while requests keep flowing: an
// external server is killed (the router loses NATS too, so it expires no
// one and every request succeeds); the router's embedded one cannot die
// alone, so there every relay's connection is cut instead, and past the
// silence limit the router expires every endpoint it no longer hears.
// Blocks stored before the outage are still in the engines and must be in
// the index afterwards.
func natsOutage(t *testing.T, f *faultRun, embedded bool, outage time.Duration) {
	long := outage > shortOutage
	o := harness.PrefixOptions{Sims: 2}
	misses := harness.RouterHeartbeatMisses
	if long {
		misses = longOutageMisses
	}
	o.Configure = func(c *router.Config) { c.Events.HeartbeatMisses = misses }
	pr := &proxiedRelays{t: t}
	if embedded {
		o.RelayURL = pr.url
	} else {
		natsd, err := buildNATSD()
		if err != nil {
			t.Fatal(err)
		}
		o.NATSD = natsd
	}
	ps := faultPrefixStack(t, o)
	ctx := context.Background()
	prompts := warmUp(t, ps, "outage", 4)
	watch := ps.Router.MetricsURL()
	if embedded {
		watch = "http://" + ps.Relays[0].AdminAddr + "/metrics"
	}
	disconnects := counter(t, watch, "warmroute_events_nats_disconnects_total", nil)
	expired := counter(t, ps.Router.MetricsURL(), "warmroute_events_subscriber_endpoints_expired_total", nil)
	syncs := counter(t, ps.Router.MetricsURL(), "warmroute_events_subscriber_syncs_total", map[string]string{"result": "ok"})
	tr := startTraffic(ps, prompts, 2)
	at := time.Now()
	if embedded {
		pr.proxy.Cut()
		f.detectedLog(ps.Relays[0].LogPath(), "NATS connection down", nil, at, faultHeartbeat)
	} else {
		ps.NATS.Kill()
		f.detectedLog(ps.Router.LogPath(), "NATS connection down", nil, at, faultHeartbeat)
	}
	time.Sleep(outage - time.Since(at))
	var back time.Time
	if embedded {
		back = time.Now()
		pr.proxy.Restore()
	} else {
		back = time.Now()
		if err := ps.NATS.Restart(ctx); err != nil {
			t.Fatal(err)
		}
	}
	sent := tr.finish(f)
	clear := heardAgain(t, ps, back)
	f.converged(clear, "after NATS came back", stackDivergence(t, ps))
	wantCounter(t, watch, "warmroute_events_nats_disconnects_total", nil, disconnects, 1)
	switch {
	case long && embedded:
		// The router hears its relays fall silent: the endpoints expire,
		// and come back through a snapshot sync.
		wantCounter(t, ps.Router.MetricsURL(), "warmroute_events_subscriber_endpoints_expired_total", nil, expired, 1)
		wantCounter(t, ps.Router.MetricsURL(), "warmroute_events_subscriber_syncs_total",
			map[string]string{"result": "ok"}, syncs, float64(len(ps.Sims)))
		// Not asserted: while every endpoint is expired the pool has no
		// candidate and answers 503 (see the README's fault table).
		f.row.note = "503 while every endpoint is expired (no live endpoint in the pool)"
	case long:
		// The router itself lost NATS: silence it could not hear expires
		// no one, the endpoints keep routing on what the index held, and
		// each relay's first heartbeat after the return starts a sync
		// (unless a gap sync came first and covered it).
		if v := counter(t, ps.Router.MetricsURL(), "warmroute_events_subscriber_endpoints_expired_total", nil); v != expired {
			t.Errorf("a router cut off from NATS expired %v endpoints", v-expired)
		}
		wantCounter(t, ps.Router.MetricsURL(), "warmroute_events_subscriber_syncs_total",
			map[string]string{"result": "ok"}, syncs, float64(len(ps.Sims)))
		fallthrough
	default:
		for _, s := range sent {
			if s.err != nil || s.status != 200 {
				t.Errorf("request during a NATS outage the router could not hear failed: %d %v", s.status, s.err)
			}
		}
	}
}

// relayKill: a relay dies without a word while its engine keeps serving.
// The router can only notice the silence (expiry), then routes elsewhere;
// the restarted relay republishes the engine's replay buffer.
func relayKill(t *testing.T, f *faultRun) {
	ps := faultPrefixStack(t, harness.PrefixOptions{Sims: 2,
		Configure: func(c *router.Config) { c.Events.HeartbeatMisses = relayKillMisses }})
	ctx := context.Background()
	prompts := warmUp(t, ps, "relaykill", 4)
	victim := ps.EventSims[0]
	expired := counter(t, ps.Router.MetricsURL(), "warmroute_events_subscriber_endpoints_expired_total", nil)
	tr := startTraffic(ps, prompts, 2)
	at := time.Now()
	ps.Relays[0].Kill()
	// Silence is all there is to see: the limit, plus one heartbeat for
	// the expiry check's own period.
	silence := time.Duration(relayKillMisses) * faultHeartbeat
	detected := f.detected(ps.Router, victim.Addr, "expired", at, silence+faultHeartbeat)
	time.Sleep(2 * faultHeartbeat)
	sent := tr.finish(f)
	noneAfter(t, sent, detected, victim.ID)
	restarted := time.Now()
	if err := ps.Relays[0].Restart(ctx); err != nil {
		t.Fatal(err)
	}
	clear := routerLogAfter(t, ps.Router, "endpoint live again", victim.Addr, restarted)
	f.converged(clear, "after the relay restarted", stackDivergence(t, ps))
	wantCounter(t, ps.Router.MetricsURL(), "warmroute_events_subscriber_endpoints_expired_total", nil, expired, 1)
	wantCounter(t, ps.Router.MetricsURL(), "warmroute_scorer_excluded_endpoints_total", map[string]string{"reason": "expired"}, 0, 1)
}

// relayPartition black-holes one relay's NATS connection (bytes stop both
// ways, the TCP connection stays up: its client notices nothing) while its
// engine keeps serving, past the router's silence limit, then heals it:
// the returning endpoint is synced from its relay's mirror.
func relayPartition(t *testing.T, f *faultRun) {
	pr := &proxiedRelays{t: t}
	ps := faultPrefixStack(t, harness.PrefixOptions{Sims: 2, RelayURL: func(i int, url string) string {
		if i == 0 {
			return pr.url(i, url)
		}
		return url
	}, Configure: func(c *router.Config) { c.Events.HeartbeatMisses = relayKillMisses }})
	prompts := warmUp(t, ps, "partition", 4)
	victim := ps.EventSims[0]
	tr := startTraffic(ps, prompts, 2)
	at := time.Now()
	pr.proxy.Block(true)
	silence := time.Duration(relayKillMisses) * faultHeartbeat
	detected := f.detected(ps.Router, victim.Addr, "expired", at, silence+faultHeartbeat)
	time.Sleep(partitionDuration - time.Since(at))
	// Traffic stops before the heal: once healed and synced the victim is
	// a candidate again, so a request after that may rightly reach it.
	sent := tr.finish(f)
	noneAfter(t, sent, detected, victim.ID)
	healed := time.Now()
	pr.proxy.Block(false)
	clear := routerLogAfter(t, ps.Router, "endpoint live again", victim.Addr, healed)
	f.converged(clear, "after the partition healed", stackDivergence(t, ps))
	wantCounter(t, ps.Router.MetricsURL(), "warmroute_events_subscriber_syncs_total",
		map[string]string{"reason": "expired", "result": "ok"}, 0, 1)
}

// clusterNodeKill runs NATS as a three-node cluster: the router on node 1,
// relay i on node 2+i. It kills node (0: the router's, 1: the first
// relay's) under traffic, restarts it, and checks the index is whole.
func clusterNodeKill(t *testing.T, f *faultRun, node int) {
	natsd, err := buildNATSD()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dir := t.TempDir()
	nodes, err := harness.StartNATSCluster(ctx, natsd, dir, 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			_ = n.Stop()
		}
	})
	ps := faultPrefixStack(t, harness.PrefixOptions{Sims: 2,
		Configure: func(c *router.Config) { c.Events.URL = nodes[0].URL() },
		RelayURL:  func(i int, _ string) string { return nodes[1+i].URL() }})
	prompts := warmUp(t, ps, "cluster", 4)
	watch := ps.Router
	logOf := ps.Router.LogPath()
	if node == 1 {
		logOf = ps.Relays[0].LogPath()
	}
	disconnects := counter(t, watch.MetricsURL(), "warmroute_events_nats_disconnects_total", nil)
	tr := startTraffic(ps, prompts, 2)
	at := time.Now()
	nodes[node].Kill()
	f.detectedLog(logOf, "NATS connection down", nil, at, faultHeartbeat)
	time.Sleep(shortOutage - time.Since(at))
	back := time.Now()
	if err := nodes[node].Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := harness.WaitClusterRoutes(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	sent := tr.finish(f)
	for _, s := range sent {
		if s.err != nil || s.status != 200 {
			t.Errorf("request while a NATS node was down failed: %d %v", s.status, s.err)
		}
	}
	clear := heardAgain(t, ps, back)
	f.converged(clear, "after the node came back", stackDivergence(t, ps))
	if node == 0 {
		wantCounter(t, watch.MetricsURL(), "warmroute_events_nats_disconnects_total", nil, disconnects, 1)
	} else {
		wantCounter(t, "http://"+ps.Relays[0].AdminAddr+"/metrics", "warmroute_events_nats_disconnects_total", nil, 0, 1)
	}
}
