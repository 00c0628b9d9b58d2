package tests

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warmroute/warmroute/events/bus"
)

// TestChartProcesses runs the simulator, its relay sidecar, the router and
// its Envoy sidecar as local processes with exactly the arguments and files
// the chart renders (paths under the pod's mounts point at the rendered
// ConfigMaps, $(POD_IP) is loopback), with a real NATS server as the
// external one; it routes requests through Envoy, waits for the router to
// hear the relay's heartbeats, and checks that every metric the dashboard
// queries is exported by the router.
func TestChartProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs processes")
	}
	envoy := envoyBinary(t)
	bin := buildWarmroute(t)
	ports := freePorts(t, 7)
	simPort, grpcPort, adminPort, envoyPort, envoyAdmin := ports[0], ports[1], ports[2], ports[3], ports[4]
	nats, err := bus.StartEmbedded("127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nats.Close)
	relayAdmin, zmqPort := ports[5], ports[6]
	docs := render(t, m{
		"nats": m{"mode": "external", "external": m{"url": nats.ClientURL()}},
		"relay": m{"enginePort": simPort, "model": "sim-model", "adminPort": relayAdmin, "heartbeat": "200ms",
			"zmq": fmt.Sprintf("tcp://127.0.0.1:%d", zmqPort)},
		"examples": m{"sim": m{"enabled": true}},
		"router": m{"ports": m{"grpc": grpcPort, "admin": adminPort}, "config": m{
			"debugAddr":   "off", // another process may hold the default port
			"defaultPool": "sim-model",
			"pools":       []any{m{"name": "sim-model", "endpoints": []any{fmt.Sprintf("127.0.0.1:%d", simPort)}}},
		}},
		"envoy": m{"port": envoyPort, "adminPort": envoyAdmin},
	})
	pod := podFS{mounts: map[string]string{}, env: map[string]string{"POD_NAME": "sim-0", "POD_IP": "127.0.0.1"}}
	pod.mountConfigMap(t, docs, releaseName+"-warmroute-config", "/etc/warmroute")
	pod.mountConfigMap(t, docs, releaseName+"-warmroute-envoy", "/etc/envoy")

	start(t, "sim", bin, pod.args(container(t, docs, releaseName+"-warmroute-sim", "sim"))...)
	// A relay that heartbeats before its engine answers reports it down,
	// and the router keeps it out until a later heartbeat: start the relay
	// once the simulator is up, so the first request does not race that.
	waitHTTP(t, localURL(simPort, "/health"), 30*time.Second)
	relay := relaySnippet(t, docs)
	start(t, "relay", bin, pod.args(relay)...)
	start(t, "router", bin, pod.args(container(t, docs, releaseName+"-warmroute-router", "router"))...)
	start(t, "envoy", envoy, pod.args(container(t, docs, releaseName+"-warmroute-router", "envoy"))...)
	waitHTTP(t, localURL(adminPort, "/readyz"), 30*time.Second)
	waitHTTP(t, localURL(envoyAdmin, "/ready"), 30*time.Second)
	// The relay answers its probes' path on the port they name.
	waitHTTP(t, localURL(relayAdmin, relay.ReadinessProbe.HTTPGet.Path), 10*time.Second)
	waitHTTP(t, localURL(relayAdmin, relay.LivenessProbe.HTTPGet.Path), 10*time.Second)

	for i := range 5 {
		served := complete(t, localURL(envoyPort, "/v1/completions"), i)
		if served != "sim-0" {
			t.Errorf("request %d served by %q, want the simulator sim-0", i, served)
		}
	}
	waitMetric(t, localURL(adminPort, "/metrics"), "warmroute_events_source_heartbeat_age_seconds", 20*time.Second)
	checkDashboardMetrics(t, exportedFamilies(t, get(t, localURL(adminPort, "/metrics"))))
}

// waitMetric polls url until its exposition has the family name.
func waitMetric(t *testing.T, url, name string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !exportedFamilies(t, get(t, url))[name] {
		if time.Now().After(deadline) {
			t.Fatalf("%s has no %s after %v", url, name, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// complete sends one completion through Envoy and returns the simulator that
// served it.
func complete(t *testing.T, url string, i int) string {
	t.Helper()
	body := fmt.Sprintf(`{"model":"sim-model","prompt":"request %d: a shared system prompt that is long enough to span blocks","max_tokens":4}`, i)
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST %s: status %d: %s", url, resp.StatusCode, msg)
	}
	return resp.Header.Get("x-warmroute-served-by")
}

// exportedFamilies lists the metric families in a Prometheus text exposition.
func exportedFamilies(t *testing.T, exposition string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(exposition))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 3 && f[0] == "#" && f[1] == "TYPE" {
			out[f[2]] = true
		}
	}
	if len(out) == 0 {
		t.Fatal("no metric families in /metrics")
	}
	return out
}

// checkDashboardMetrics: every metric the dashboard and the alert rules
// query is exported, or
// listed in testdata/pending-metrics.txt as not yet wired into `serve`; a
// pending metric that is now exported must leave the list.
func checkDashboardMetrics(t *testing.T, exported map[string]bool) {
	t.Helper()
	pending := pendingMetrics(t)
	for _, name := range referencedMetrics(t) {
		switch {
		case exported[name] && pending[name]:
			t.Errorf("%s is exported now: remove it from testdata/pending-metrics.txt", name)
		case !exported[name] && !pending[name]:
			t.Errorf("the dashboard or an alert queries %s, which the router does not export", name)
		}
	}
}

func pendingMetrics(t *testing.T) map[string]bool {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "pending-metrics.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if line = strings.TrimSpace(line); line != "" {
			out[line] = true
		}
	}
	return out
}
