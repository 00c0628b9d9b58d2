package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/warmroute/warmroute/events/bus"
)

// natsAuthConf is an auth.conf as the chart's README tells the operator to
// write it: routers subscribe to every model's events and heartbeats and to
// their own replies, and publish snapshot requests and (with JetStream, on in
// the embedded mode) JetStream API requests; relays publish only their model's
// subjects and answer only their model's snapshot requests.
func natsAuthConf(router, relay, model string) string {
	return fmt.Sprintf(`authorization {
  users = [
    {nkey: %s, permissions: {
      publish: {allow: ["warmroute.snap.v1.>", "$JS.API.>"]}
      subscribe: {allow: ["warmroute.kv.v1.>", "warmroute.hb.v1.>", "_INBOX.>"]}
    }}
    {nkey: %s, permissions: {
      publish: {allow: ["warmroute.kv.v1.%[3]s.>", "warmroute.hb.v1.%[3]s.>"]}
      subscribe: {allow: ["warmroute.snap.v1.%[3]s.>"]}
      allow_responses: true
    }}
  ]
}
`, router, relay, model)
}

// nkeyUser writes a new user NKey's seed to dir/name and returns its public key.
func nkeyUser(t *testing.T, dir, name string) string {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, err := kp.Seed()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), seed, 0o600); err != nil {
		t.Fatal(err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

// TestChartNATSAuthorizationProcesses runs the chart's embedded-NATS
// configuration with nats.embedded.auth.existingSecret: a NATS server with
// the rendered nats.conf (which includes the Secret's auth.conf), the
// simulator, its relay and the router as processes with the rendered
// arguments, each pod seeing only its own key of the Secret. The router hears
// the relay's heartbeats and syncs it from the relay's snapshot (every
// permission the README lists is used and enough), while a publish outside a
// user's permissions is refused by the server: a relay cannot publish
// another model's events, a router cannot publish events at all.
func TestChartNATSAuthorizationProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs processes")
	}
	bin := buildWarmroute(t)
	ports := freePorts(t, 5)
	simPort, grpcPort, adminPort, relayAdmin, monitorPort := ports[0], ports[1], ports[2], ports[3], ports[4]
	const model = "sim-model"
	docs := render(t, m{
		"nats": m{"mode": "embedded", "embedded": m{"monitorPort": monitorPort, "auth": m{"existingSecret": "nats-auth"}}},
		"relay": m{"enginePort": simPort, "model": model, "adminPort": relayAdmin, "heartbeat": "200ms",
			"zmq": fmt.Sprintf("tcp://127.0.0.1:%d", freePorts(t, 1)[0])},
		"examples": m{"sim": m{"enabled": true}},
		"router": m{"ports": m{"grpc": grpcPort, "admin": adminPort}, "config": m{
			"defaultPool": model,
			"debugAddr":   "off",
			"pools":       []any{m{"name": model, "endpoints": []any{fmt.Sprintf("127.0.0.1:%d", simPort)}}},
		}},
		"envoy": m{"mode": "none"},
	})

	// The Secret: auth.conf for the server, one seed for each client.
	secret := t.TempDir()
	auth := natsAuthConf(nkeyUser(t, secret, "router.nk"), nkeyUser(t, secret, "relay.nk"), model)

	// The NATS pod: the rendered nats.conf, the Secret's auth.conf where it
	// includes it; where it listens and stores is the test's.
	natsDir := t.TempDir()
	pod := podFS{mounts: map[string]string{}, env: map[string]string{}}
	pod.mountConfigMap(t, docs, releaseName+"-warmroute-nats", "/etc/nats")
	if err := os.Rename(filepath.Join(pod.mounts["/etc/nats"], "nats.conf"), filepath.Join(natsDir, "nats.conf")); err != nil {
		t.Fatal(err)
	}
	// The pod's writable /var/run/nats (its pid file, for the preStop hook).
	mapInFile(t, filepath.Join(natsDir, "nats.conf"), filepath.Dir(natsPidFile), t.TempDir())
	if err := os.Mkdir(filepath.Join(natsDir, "auth"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(natsDir, "auth", "auth.conf"), []byte(auth), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("POD_NAME", "wr-warmroute-nats-0") // server_name: $POD_NAME
	srv, err := bus.StartEmbeddedWith(bus.EmbeddedOptions{Host: "127.0.0.1", ConfigFile: filepath.Join(natsDir, "nats.conf"),
		JetStreamDir: t.TempDir()})
	if err != nil {
		t.Fatalf("NATS with the rendered nats.conf: %v", err)
	}
	t.Cleanup(srv.Close)
	// The Service's name resolves to the test's server.
	natsHost := fmt.Sprintf("nats://%s-warmroute-nats:4222", releaseName)

	// Each pod mounts only its own key: a directory holding just that file.
	only := func(key string) string {
		dir := t.TempDir()
		raw, err := os.ReadFile(filepath.Join(secret, key))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, key), raw, 0o600); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	routerPod := podFS{mounts: map[string]string{"/etc/warmroute/nats-auth": only("router.nk")}, env: map[string]string{}}
	routerPod.mountConfigMap(t, docs, releaseName+"-warmroute-config", "/etc/warmroute")
	serve := filepath.Join(routerPod.mounts["/etc/warmroute"], "serve.yaml")
	raw, err := os.ReadFile(serve)
	if err != nil {
		t.Fatal(err)
	}
	cfg := strings.NewReplacer(natsHost, srv.ClientURL(),
		"/etc/warmroute/nats-auth", routerPod.mounts["/etc/warmroute/nats-auth"]).Replace(string(raw))
	if !strings.Contains(cfg, srv.ClientURL()) || strings.Contains(cfg, "/etc/warmroute/nats-auth") {
		t.Fatalf("serve.yaml does not name the NATS Service and the mounted seed as expected:\n%s", raw)
	}
	if err := os.WriteFile(serve, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	relayPod := podFS{mounts: map[string]string{"/etc/warmroute/nats-auth": only("relay.nk")},
		env: map[string]string{"POD_NAME": "sim-0", "POD_IP": "127.0.0.1"}}
	relay := container(t, docs, releaseName+"-warmroute-sim", "warmroute-relay")
	relayArgs := relayPod.args(relay)
	for i, a := range relayArgs {
		relayArgs[i] = strings.ReplaceAll(a, natsHost, srv.ClientURL())
	}

	start(t, "sim", bin, relayPod.args(container(t, docs, releaseName+"-warmroute-sim", "sim"))...)
	waitHTTP(t, localURL(simPort, "/health"), 30*time.Second)
	start(t, "relay", bin, relayArgs...)
	start(t, "router", bin, routerPod.args(container(t, docs, releaseName+"-warmroute-router", "router"))...)
	waitHTTP(t, localURL(adminPort, "/readyz"), 30*time.Second)
	waitHTTP(t, localURL(relayAdmin, "/healthz"), 30*time.Second)
	waitMetric(t, localURL(adminPort, "/metrics"), "warmroute_events_source_heartbeat_age_seconds", 20*time.Second)
	waitSample(t, localURL(adminPort, "/metrics"), `warmroute_events_subscriber_syncs_total{reason="start",result="ok"}`, 20*time.Second)

	for _, c := range []struct{ name, seed, subject string }{
		{"relay publishing another model's events", filepath.Join(secret, "relay.nk"), "warmroute.kv.v1.other-model.10%2E0%2E0%2E9%3A8000"},
		{"router publishing events", filepath.Join(secret, "router.nk"), "warmroute.kv.v1." + model + ".127%2E0%2E0%2E1%3A1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := deniedPublish(t, srv.ClientURL(), c.seed, c.subject); err != nil {
				t.Error(err)
			}
		})
	}
}

// deniedPublish connects with the NKey seed, publishes to subject and
// returns nil when the server answers with a permissions violation for it.
func deniedPublish(t *testing.T, url, seed, subject string) error {
	t.Helper()
	opt, err := nats.NkeyOptionFromSeed(seed)
	if err != nil {
		return err
	}
	denied := make(chan error, 4)
	nc, err := nats.Connect(url, opt, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		denied <- err
	}))
	if err != nil {
		return fmt.Errorf("connecting: %w", err)
	}
	defer nc.Close()
	if err := nc.Publish(subject, []byte("forged")); err != nil {
		return err
	}
	_ = nc.Flush()
	select {
	case err := <-denied:
		if !strings.Contains(strings.ToLower(err.Error()), "permissions violation") || !strings.Contains(err.Error(), subject) {
			return fmt.Errorf("publish to %s: error %v, want a permissions violation naming it", subject, err)
		}
		return nil
	case <-time.After(5 * time.Second):
		return fmt.Errorf("publish to %s was not refused", subject)
	}
}

// waitSample polls url until its exposition has a sample line starting with
// series (name and labels as exposed) whose value is not 0.
func waitSample(t *testing.T, url, series string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		for _, line := range strings.Split(get(t, url), "\n") {
			if rest, ok := strings.CutPrefix(line, series+" "); ok && strings.TrimSpace(rest) != "0" {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has no non-zero %s after %v", url, series, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
