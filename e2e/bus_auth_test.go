package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/vmihailenco/msgpack/v5"
	"sigs.k8s.io/yaml"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/internal/testwait"
	"github.com/warmroute/warmroute/router"
	"github.com/warmroute/warmroute/scorer"
)

// The shipped example's subjects and users, which busAuthConfig rewrites
// for the test's simulators.
const (
	exampleModel = "Qwen/Qwen3-8B"
	exampleA     = "10.0.0.5:8000"
	exampleB     = "10.0.0.6:8000"
	// forgedEndpoint is not in the router's pools.
	forgedEndpoint = "127.0.0.1:1"
)

// busAuthConfig writes examples/nats/nats.conf with its model and its two
// relays' endpoints replaced by the test's, plus a "wide" user allowed to
// publish every warmroute subject (a leaked broad credential), whose
// forgeries only the router's own checks can stop.
func busAuthConfig(t *testing.T, dir, model string) func([]*harness.EventSim) (string, error) {
	return func(sims []*harness.EventSim) (string, error) {
		root, err := harness.ModuleRoot(context.Background())
		if err != nil {
			return "", err
		}
		b, err := os.ReadFile(filepath.Join(root, "examples", "nats", "nats.conf"))
		if err != nil {
			return "", err
		}
		conf := strings.NewReplacer(
			api.EncodeToken(exampleModel), api.EncodeToken(model),
			api.EncodeToken(exampleA), api.EncodeToken(sims[0].Addr),
			api.EncodeToken(exampleB), api.EncodeToken(sims[1].Addr),
		).Replace(string(b))
		wide := `    {user: wide, password: "wide-secret", permissions: {publish: ["warmroute.>"], subscribe: []}}` + "\n  ]"
		conf = strings.Replace(conf, "\n  ]", "\n"+wide, 1)
		path := filepath.Join(dir, "nats.conf")
		return path, os.WriteFile(path, []byte(conf), 0o600)
	}
}

// withUser puts user:password into a nats:// URL.
func withUser(url, user, password string) string {
	return strings.Replace(url, "nats://", "nats://"+user+":"+password+"@", 1)
}

// TestBusAuthorization runs the shipped NATS authorization example on a
// real NATS server process: relays and the router authenticate, forged
// heartbeats and events change neither the index nor the pool and are
// refused or counted, a router or relay with a wrong credential says so
// within seconds, and good requests still route.
func TestBusAuthorization(t *testing.T) {
	natsd, err := buildNATSD()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	relayUsers := [][2]string{{"relay-a", "relay-a-secret"}, {"relay-b", "relay-b-secret"}}
	ps := newPrefixStack(t, harness.PrefixOptions{Sims: 2, NATSD: natsd,
		NATSConfig: busAuthConfig(t, dir, harness.DefaultModel),
		RelayURL:   func(i int, url string) string { return withUser(url, relayUsers[i][0], relayUsers[i][1]) },
		Configure: func(c *router.Config) {
			c.Events.URL = withUser(c.Events.URL, "router", "router-secret")
		}})
	ctx := context.Background()
	a, b := ps.EventSims[0], ps.EventSims[1]
	prompt := words("busauth", 40)
	tokens := tokenize(t, a, prompt)
	warmBoth(t, ps, prompt)
	before := indexState(t, ps, tokens)

	t.Run("forgeries change nothing", func(t *testing.T) {
		// relay-a may publish only a's subjects: b's and a stranger's are
		// refused by the server, including a "leaving" heartbeat for b.
		relayA := connectAs(t, ps.NATS.URL(), "relay-a", "relay-a-secret")
		forgeHeartbeat(t, relayA, harness.DefaultModel, b.Addr, true)
		forgeBatch(t, relayA, harness.DefaultModel, b.Addr, b.Addr, tokens)
		forgeHeartbeat(t, relayA, harness.DefaultModel, forgedEndpoint, false)
		// On its own subject, a batch claiming to be b's is a mismatch.
		forgeBatch(t, relayA, harness.DefaultModel, a.Addr, b.Addr, tokens)
		testwait.Until(t, 5*time.Second, testwait.That("relay-a's forgeries refused", func() bool {
			return errors.Is(relayA.LastError(), nats.ErrPermissionViolation)
		}))
		// A client without credentials cannot even connect.
		if nc, err := nats.Connect(ps.NATS.URL(), nats.MaxReconnects(0)); err == nil {
			nc.Close()
			t.Fatal("a client without credentials connected")
		}
		// A broad credential gets its forgeries to the router, which
		// drops those for an endpoint that is not a member.
		wide := connectAs(t, ps.NATS.URL(), "wide", "wide-secret")
		forgeHeartbeat(t, wide, harness.DefaultModel, forgedEndpoint, false)
		forgeBatch(t, wide, harness.DefaultModel, forgedEndpoint, forgedEndpoint, tokens)
		testwait.Until(t, 10*time.Second, atLeast(t, ps.Router, "warmroute_events_subscriber_messages_total",
			map[string]string{"result": "unknown_endpoint"}, 2))
		testwait.Until(t, 10*time.Second, atLeast(t, ps.Router, "warmroute_events_subscriber_messages_total",
			map[string]string{"result": "mismatch"}, 1))
		time.Sleep(time.Second) // heartbeats at 250ms: any effect would show by now
		if after := indexState(t, ps, tokens); !slices.Equal(after, before) {
			t.Fatalf("index and pool after forgeries = %v, before %v", after, before)
		}
		if n, err := ps.Router.IndexEntries(ctx, forgedEndpoint); err != nil || n.Confirmed != 0 || n.Speculative != 0 {
			t.Fatalf("forged endpoint in the index: %+v, %v", n, err)
		}
		complete(t, ps, prompt, nil)
	})

	t.Run("wrong router credential is reported", func(t *testing.T) {
		measureWrongRouterCredential(t, ps)
		complete(t, ps, words("after-wrong-router", 30), nil)
	})

	t.Run("rotated router password is reported", func(t *testing.T) {
		measureRotatedPassword(t, ps)
		complete(t, ps, words("after-rotation", 30), nil)
	})

	t.Run("wrong relay credential exits", func(t *testing.T) {
		bin, err := buildBin()
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		p, err := harness.Start("relay-bad", t.TempDir(), bin, "relay", "--endpoint-addr", a.Addr,
			"--model", harness.DefaultModel, "--zmq-url", a.EventsURL(), "--admin-addr", "",
			"--nats-url", withUser(ps.NATS.URL(), "relay-a", "wrong"))
		if err != nil {
			t.Fatal(err)
		}
		defer p.Stop()
		select {
		case <-p.Exited():
		case <-time.After(10 * time.Second):
			t.Fatal("relay with a wrong credential still running after 10s")
		}
		took := time.Since(start)
		if tail := p.Tail(5); !strings.Contains(strings.ToLower(tail), "authorization") {
			t.Fatalf("relay exited without naming authorization: %s", tail)
		}
		t.Logf("relay with a wrong credential exited after %s: %v", took.Round(time.Millisecond), p.ExitErr())
		complete(t, ps, words("after-wrong-relay", 30), nil)
	})
}

// measureWrongRouterCredential starts a second router with a wrong
// password and measures how long it takes to log the refusal and to export
// it; it must never report ready.
func measureWrongRouterCredential(t *testing.T, ps *harness.PrefixStack) {
	t.Helper()
	bin, err := buildBin()
	if err != nil {
		t.Fatal(err)
	}
	ports, err := harness.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	// No debug listener: the default address (127.0.0.1:9095) may be taken
	// by another process on the machine, and this router would exit.
	cfg := router.Config{GRPCAddr: harness.Addr(ports[0]), AdminAddr: harness.Addr(ports[1]), DebugAddr: router.DebugOff}
	cfg.Pools = []scorer.PoolConfig{{Name: ps.Model, Endpoints: []string{ps.EventSims[0].Addr, ps.EventSims[1].Addr}}}
	cfg.Events.URL = withUser(ps.NATS.URL(), "router", "wrong")
	dir := t.TempDir()
	path := filepath.Join(dir, "router.yaml")
	b, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	p, err := harness.Start("router-bad", dir, bin, "serve", "--config", path)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- router with the wrong credential (last lines) ---\n%s", p.Tail(40))
		}
	})
	logged, exported := detect(t, p, "http://"+cfg.AdminAddr, start)
	// Stay past events.unreadyAfter and the 10s a subscription flush may
	// wait: never ready.
	deadline := time.Now().Add(12 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get("http://" + cfg.AdminAddr + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				t.Fatalf("router with a wrong credential reported ready after %s", time.Since(start))
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("wrong router credential at start: logged after %s, exported after %s, never ready in %s",
		logged, exported, time.Since(start).Round(time.Second))
}

// detect waits until p has logged, and its metrics at admin show, an
// authorization refusal, and returns how long after start each came.
func detect(t *testing.T, p *harness.Process, admin string, start time.Time) (logged, exported time.Duration) {
	t.Helper()
	testwait.Until(t, 15*time.Second, func() string {
		now := time.Since(start).Round(time.Millisecond)
		if logged == 0 && authLogged(p, start) {
			logged = now
		}
		if exported == 0 {
			if m, err := harness.Scrape(context.Background(), admin+"/metrics"); err == nil &&
				m.Sum("warmroute_events_nats_errors_total", map[string]string{"reason": "authorization"}) > 0 {
				if v, ok := m.Value("warmroute_events_nats_connected", nil); ok && v == 0 {
					exported = now
				}
			}
		}
		if logged == 0 || exported == 0 {
			return fmt.Sprintf("after %s: logged %s, exported %s", now, logged, exported)
		}
		return ""
	})
	return logged, exported
}

// authLogged reports whether p logged, after since, that NATS refused it.
func authLogged(p *harness.Process, since time.Time) bool {
	b, _ := os.ReadFile(p.LogPath())
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.Contains(line, "NATS connection down") && strings.Contains(line, "reason=authorization") {
			if at, ok := logTime(line); !ok || at.After(since) {
				return true
			}
		}
	}
	return false
}

// logTime reads a text log line's time= field.
func logTime(line string) (time.Time, bool) {
	_, rest, ok := strings.Cut(line, "time=")
	if !ok {
		return time.Time{}, false
	}
	v, _, _ := strings.Cut(rest, " ")
	at, err := time.Parse(time.RFC3339Nano, v)
	return at, err == nil
}

// measureRotatedPassword restarts NATS with the router's password changed
// (a rotation the router missed) and measures how long the running router
// takes to log it, export it and turn not ready; then restores it.
func measureRotatedPassword(t *testing.T, ps *harness.PrefixStack) {
	t.Helper()
	conf := ps.NATS.ConfigFile
	good, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	rotated := strings.Replace(string(good), `password: "router-secret"`, `password: "rotated-secret"`, 1)
	if rotated == string(good) {
		t.Fatal("no router password to rotate in the NATS config")
	}
	restartNATS(t, ps, rotated)
	start := time.Now()
	logged, exported := detect(t, ps.Router.Process, "http://"+ps.Router.AdminAddr, start)
	var unready time.Duration
	testwait.Until(t, 15*time.Second, func() string {
		resp, err := http.Get("http://" + ps.Router.AdminAddr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusServiceUnavailable {
				unready = time.Since(start).Round(time.Millisecond)
				return ""
			}
		}
		return "router still ready with a refused credential"
	})
	t.Logf("router password rotated on the server: logged after %s, exported after %s, not ready after %s "+
		"(events.unreadyAfter %s)", logged, exported, unready, router.Config{}.WithDefaults().Events.UnreadyAfter.D())
	restartNATS(t, ps, string(good))
	testwait.Until(t, 15*time.Second, func() string {
		resp, err := http.Get("http://" + ps.Router.AdminAddr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return ""
			}
		}
		return "router not ready again after the credential was restored"
	})
	if err := ps.WaitSources(context.Background(), time.Now()); err != nil {
		t.Fatal(err)
	}
}

// restartNATS stops the NATS server and starts it again with conf.
func restartNATS(t *testing.T, ps *harness.PrefixStack, conf string) {
	t.Helper()
	if err := ps.NATS.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ps.NATS.ConfigFile, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ps.NATS.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// warmBoth sends prompt until both simulators have cached it, so each
// endpoint holds confirmed entries a forgery could clear.
func warmBoth(t *testing.T, ps *harness.PrefixStack, prompt string) {
	t.Helper()
	tokens := tokenize(t, ps.EventSims[0], prompt)
	for i := 0; ; i++ {
		complete(t, ps, prompt, map[string]string{"x-e2e-subset-hint": ps.EventSims[i%2].Addr})
		if lookupOn(t, ps, tokens, ps.EventSims[0].Addr).Confirmed > 0 && lookupOn(t, ps, tokens, ps.EventSims[1].Addr).Confirmed > 0 {
			return
		}
		if i == 40 {
			t.Fatal("40 requests did not cache the prompt on both simulators")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// indexState is what the router's pool and index say about tokens: each
// member endpoint with its confirmed and speculative run, sorted.
func indexState(t *testing.T, ps *harness.PrefixStack, tokens []uint32) []string {
	t.Helper()
	res, err := ps.Router.IndexLookup(context.Background(), api.IndexLookupRequest{Model: ps.Model, Tokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range res.Endpoints {
		n, err := ps.Router.IndexEntries(context.Background(), e.Endpoint)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s run %d+%d entries %d", e.Endpoint, e.Confirmed, e.Speculative, n.Confirmed))
	}
	slices.Sort(out)
	return out
}

func connectAs(t *testing.T, url, user, password string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, nats.UserInfo(user, password))
	if err != nil {
		t.Fatalf("connecting as %s: %v", user, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

func forgeHeartbeat(t *testing.T, nc *nats.Conn, model, endpoint string, leaving bool) {
	t.Helper()
	subj, _ := api.HeartbeatSubject(model, endpoint)
	body := mustJSON(t, api.Heartbeat{Endpoint: endpoint, Model: model, Relay: "forger", EngineConnected: true,
		Interval: api.Duration(250 * time.Millisecond), SentAt: time.Now(), Leaving: leaving})
	if err := nc.Publish(subj, body); err != nil {
		t.Fatal(err)
	}
	_ = nc.Flush()
}

// forgeBatch publishes, on endpoint's subject, a well-formed batch storing
// the blocks of tokens whose endpoint header claims claimed.
func forgeBatch(t *testing.T, nc *nats.Conn, model, endpoint, claimed string, tokens []uint32) {
	t.Helper()
	const bs = harness.DefaultBlockSize
	n := len(tokens) / bs * bs
	hashes := make([]uint64, n/bs)
	for i := range hashes {
		hashes[i] = uint64(0xF0F0_0000 + i)
	}
	payload, err := msgpack.Marshal([]any{float64(time.Now().UnixMicro()) / 1e6, []any{map[string]any{
		"type": "BlockStored", "block_hashes": hashes, "parent_block_hash": nil, "token_ids": tokens[:n],
		"block_size": bs}}, 0})
	if err != nil {
		t.Fatal(err)
	}
	subj, _ := api.EventSubject(model, endpoint)
	h := nats.Header{api.EventKindHeader: {api.EventKindBatch}, api.EventSeqHeader: {strconv.Itoa(1 << 30)},
		api.EventDPRankHeader: {"0"}, api.EventRelayHeader: {"forger"}, api.EventEndpointHeader: {claimed}}
	if err := nc.PublishMsg(&nats.Msg{Subject: subj, Header: h, Data: payload}); err != nil {
		t.Fatal(err)
	}
	_ = nc.Flush()
}
