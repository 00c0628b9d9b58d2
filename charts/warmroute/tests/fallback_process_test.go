package tests

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestChartFallbackProcesses runs the router and its Envoy sidecar with
// exactly the arguments and files the chart renders for fallbacks: 1 over
// two static endpoints, one of which is dead (nothing listens there). Every
// request succeeds on the live simulator, and the router counts the ones
// whose chosen endpoint was the dead one as served by their fallback.
func TestChartFallbackProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs processes")
	}
	envoy := envoyBinary(t)
	bin := buildWarmroute(t)
	ports := freePorts(t, 6)
	simPort, deadPort, grpcPort, adminPort, envoyPort, envoyAdmin := ports[0], ports[1], ports[2], ports[3], ports[4], ports[5]
	live, dead := fmt.Sprintf("127.0.0.1:%d", simPort), fmt.Sprintf("127.0.0.1:%d", deadPort)
	docs := render(t, m{
		"router": m{"ports": m{"grpc": grpcPort, "admin": adminPort}, "config": m{
			"debugAddr": "off", // another process may hold the default port
			"fallbacks": 1, "defaultPool": "sim-model",
			"pools": []any{m{"name": "sim-model", "endpoints": []any{dead, live}}},
		}},
		"envoy": m{"port": envoyPort, "adminPort": envoyAdmin},
	})
	pod := podFS{mounts: map[string]string{}, env: map[string]string{"POD_NAME": "router-0", "POD_IP": "127.0.0.1"}}
	pod.mountConfigMap(t, docs, releaseName+"-warmroute-config", "/etc/warmroute")
	pod.mountConfigMap(t, docs, releaseName+"-warmroute-envoy", "/etc/envoy")
	start(t, "sim", bin, "sim", "--addr="+live, "--models=sim-model", "--id=sim-0", "--prompt-tokens-details")
	waitHTTP(t, localURL(simPort, "/health"), 30*time.Second)
	start(t, "router", bin, pod.args(container(t, docs, releaseName+"-warmroute-router", "router"))...)
	start(t, "envoy", envoy, pod.args(container(t, docs, releaseName+"-warmroute-router", "envoy"))...)
	waitHTTP(t, localURL(adminPort, "/readyz"), 30*time.Second)
	waitHTTP(t, localURL(envoyAdmin, "/ready"), 30*time.Second)

	const n = 10
	for i := range n {
		if served := complete(t, localURL(envoyPort, "/v1/completions"), i); served != "sim-0" {
			t.Errorf("request %d served by %q, want the live simulator sim-0", i, served)
		}
	}
	served := servedCounts(t, get(t, localURL(adminPort, "/metrics")))
	t.Logf("served_total by result: %v", served)
	if served["fallback"] < 1 {
		t.Error("no request was served by its fallback: the router never chose the dead endpoint, so the test proves nothing")
	}
	if served["fallback"]+served["chosen"] != n || served["unlisted"] != 0 {
		t.Errorf("served_total %v, want %d reports of chosen or fallback", served, n)
	}
}

// servedCounts reads warmroute_extproc_served_total by result from an
// exposition.
func servedCounts(t *testing.T, exposition string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(exposition))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), `warmroute_extproc_served_total{result="`)
		if !ok {
			continue
		}
		result, value, ok := strings.Cut(rest, `"} `)
		v, err := strconv.ParseFloat(value, 64)
		if !ok || err != nil {
			t.Fatalf("unexpected served_total line %q", sc.Text())
		}
		out[result] = v
	}
	return out
}
