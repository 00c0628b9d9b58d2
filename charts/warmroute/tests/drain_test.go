package tests

import (
	"bufio"
	"fmt"
	"math"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/warmroute/warmroute/router"
)

// routerPod is the rendered router Deployment's pod spec.
func routerPod(t *testing.T, docs []doc) corev1.PodSpec {
	t.Helper()
	return decodeInto[appsv1.Deployment](t, find(t, docs, "Deployment", releaseName+"-warmroute-router")).Spec.Template.Spec
}

// drainScript is the Envoy container's preStop command, checked to be the
// bash script the hook runs.
func drainScript(t *testing.T, c corev1.Container) string {
	t.Helper()
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Exec == nil {
		t.Fatalf("container %s has no preStop exec hook", c.Name)
	}
	cmd := c.Lifecycle.PreStop.Exec.Command
	if len(cmd) != 3 || cmd[0] != "/bin/bash" || cmd[1] != "-c" {
		t.Fatalf("preStop command %q, want [/bin/bash -c <script>]", cmd)
	}
	return cmd[2]
}

// The drain in numbers: Envoy fails its health check and waits drainSeconds,
// the router sleeps as long, and the pod's grace period exceeds the drain
// plus the router's shutdownGrace, for every mode with an Envoy.
func TestDrainHooksAndGracePeriod(t *testing.T) {
	defaultGrace := int(math.Ceil(router.DefaultShutdownGrace.Seconds()))
	cases := []struct {
		name      string
		vals      map[string]any
		drain     int
		grace     int // the router's shutdownGrace, in seconds
		wantTotal int // terminationGracePeriodSeconds
	}{
		{"defaults", m{}, 20, defaultGrace, 20 + defaultGrace + 5},
		{"longer shutdownGrace", m{"router": m{"drainSeconds": 45, "config": m{"shutdownGrace": "1m30s"}}}, 45, 90, 45 + 90 + 5},
		{"sub-second shutdownGrace rounds up", m{"router": m{"drainSeconds": 5, "config": m{"shutdownGrace": "1500ms"}}}, 5, 2, 5 + 2 + 5},
		{"explicit grace period", m{"router": m{"terminationGracePeriodSeconds": 120}}, 20, defaultGrace, 120},
		{"Envoy Deployment", m{"envoy": m{"mode": "deployment"}}, 20, defaultGrace, 20 + defaultGrace + 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			docs := render(t, c.vals)
			pod := routerPod(t, docs)
			total := int(*pod.TerminationGracePeriodSeconds)
			if total != c.wantTotal || total <= c.drain+c.grace {
				t.Errorf("terminationGracePeriodSeconds %d, want %d (> drain %d + shutdownGrace %d)", total, c.wantTotal, c.drain, c.grace)
			}
			var routerC corev1.Container
			for _, ct := range pod.Containers {
				if ct.Name == "router" {
					routerC = ct
				}
			}
			if l := routerC.Lifecycle; l == nil || l.PreStop == nil || l.PreStop.Sleep == nil || int(l.PreStop.Sleep.Seconds) != c.drain {
				t.Errorf("router preStop %+v, want a sleep of %ds", l, c.drain)
			}
			envoyDep, envoyName := releaseName+"-warmroute-router", "envoy"
			if c.vals["envoy"] != nil {
				envoyDep = releaseName + "-warmroute-envoy"
				envoyPod := decodeInto[appsv1.Deployment](t, find(t, docs, "Deployment", envoyDep)).Spec.Template.Spec
				if g := int(*envoyPod.TerminationGracePeriodSeconds); g <= c.drain {
					t.Errorf("Envoy pods' terminationGracePeriodSeconds %d, want more than the drain %d", g, c.drain)
				}
			}
			envoy := container(t, docs, envoyDep, envoyName)
			script := drainScript(t, envoy)
			for _, want := range []string{"/dev/tcp/127.0.0.1/9901", "POST /healthcheck/fail HTTP/1.1", fmt.Sprintf("sleep %d", c.drain)} {
				if !strings.Contains(script, want) {
					t.Errorf("drain script lacks %q: %s", want, script)
				}
			}
			if strings.Index(script, "/healthcheck/fail") > strings.Index(script, "sleep") {
				t.Errorf("drain script sleeps before failing the health check: %s", script)
			}
			// Readiness follows the failed health check.
			if p := envoy.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz/envoy" {
				t.Errorf("Envoy readiness probe %+v, want GET /healthz/envoy", p)
			}
			if cfg := renderedEnvoyConfig(t, docs); !strings.Contains(cfg, "envoy.filters.http.health_check") || !strings.Contains(cfg, "exact: /healthz/envoy") {
				t.Errorf("Envoy bootstrap has no health_check filter on /healthz/envoy")
			}
		})
	}
}

func TestDrainOff(t *testing.T) {
	docs := render(t, m{"router": m{"drainSeconds": 0}})
	pod := routerPod(t, docs)
	for _, c := range pod.Containers {
		if c.Lifecycle != nil {
			t.Errorf("container %s has a lifecycle hook with drainSeconds 0: %+v", c.Name, c.Lifecycle)
		}
	}
	if g := *pod.TerminationGracePeriodSeconds; g <= int64(router.DefaultShutdownGrace.Seconds()) {
		t.Errorf("terminationGracePeriodSeconds %d does not exceed shutdownGrace", g)
	}
}

func TestDrainRejectsShortGracePeriod(t *testing.T) {
	_, err := tryRender(chartDir(t), m{"router": m{"terminationGracePeriodSeconds": 30}})
	if err == nil || !strings.Contains(err.Error(), "must exceed router.drainSeconds (20) + router.config.shutdownGrace (15s)") {
		t.Errorf("got %v, want the grace period refused", err)
	}
}

// TestDrainKeepsStreamInFlight runs the sidecar pod's processes (simulator,
// router, Envoy) with the chart's arguments, starts a slow streamed
// completion, then terminates the pod as the kubelet does: the preStop hooks
// (the rendered bash script for Envoy, the sleep for the router), then
// SIGTERM. Envoy's readiness path must fail during the drain, and the stream
// that was in flight at the hook must finish with every token.
func TestDrainKeepsStreamInFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs processes")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash for the preStop script")
	}
	envoy := envoyBinary(t)
	bin := buildWarmroute(t)
	ports := freePorts(t, 5)
	simPort, grpcPort, adminPort, envoyPort, envoyAdmin := ports[0], ports[1], ports[2], ports[3], ports[4]
	const drain, tokens = 4, 20
	docs := render(t, m{
		"router": m{"drainSeconds": drain, "ports": m{"grpc": grpcPort, "admin": adminPort}, "config": m{
			"defaultPool":   "sim-model",
			"shutdownGrace": "5s",
			"debugAddr":     "off", // other tests' routers may hold the default port
			"pools":         []any{m{"name": "sim-model", "endpoints": []any{fmt.Sprintf("127.0.0.1:%d", simPort)}}},
		}},
		"envoy": m{"port": envoyPort, "adminPort": envoyAdmin},
	})
	pod := podFS{mounts: map[string]string{}, env: map[string]string{"POD_NAME": "sim-0", "POD_IP": "127.0.0.1"}}
	pod.mountConfigMap(t, docs, releaseName+"-warmroute-config", "/etc/warmroute")
	pod.mountConfigMap(t, docs, releaseName+"-warmroute-envoy", "/etc/envoy")
	// 150ms a token: the stream lasts about 3s, longer than the
	// moment the drain starts and shorter than the drain.
	// The example simulators render only with NATS for their relays, which
	// this test does not need: the simulator runs on its own.
	start(t, "sim", bin, "sim", fmt.Sprintf("--addr=127.0.0.1:%d", simPort), "--models=sim-model", "--id=sim-0", "--decode-per-token=150ms")
	routerCmd := start(t, "router", bin, pod.args(container(t, docs, releaseName+"-warmroute-router", "router"))...)
	envoyC := container(t, docs, releaseName+"-warmroute-router", "envoy")
	envoyCmd := start(t, "envoy", envoy, pod.args(envoyC)...)
	health := localURL(envoyPort, envoyC.ReadinessProbe.HTTPGet.Path)
	waitHTTP(t, localURL(adminPort, "/readyz"), 30*time.Second)
	waitHTTP(t, health, 30*time.Second)

	body := fmt.Sprintf(`{"model":"sim-model","prompt":"a stream in flight at SIGTERM","max_tokens":%d,"stream":true}`, tokens)
	resp, err := http.Post(localURL(envoyPort, "/v1/completions"), "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("starting the stream: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream status %d", resp.StatusCode)
	}
	events := make(chan string, 64)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "data: ") {
				events <- strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	if _, ok := <-events; !ok {
		t.Fatal("the stream ended before its first event")
	}

	// The kubelet: every container's preStop at once, then SIGTERM to each.
	// The router's sleep runs beside Envoy's script and ends with it.
	script, hookDone := drainScript(t, envoyC), make(chan error, 1)
	go func() { hookDone <- exec.Command("bash", "-c", script).Run() }()
	waitStatus(t, health, http.StatusServiceUnavailable, drain*time.Second)
	if err := <-hookDone; err != nil {
		t.Errorf("Envoy preStop script: %v", err)
	}
	_ = envoyCmd.Process.Signal(syscall.SIGTERM)
	_ = routerCmd.Process.Signal(syscall.SIGTERM)

	got, done := 1, false
	for ev := range events {
		if ev == "[DONE]" {
			done = true
			continue
		}
		got++
	}
	if !done || got < tokens {
		t.Errorf("the stream in flight at the drain got %d events (done %v), want %d tokens and [DONE]", got, done, tokens)
	}
}

// waitStatus polls url until it answers status.
func waitStatus(t *testing.T, url string, status int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == status {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer %d within %v (last error %v)", url, status, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
