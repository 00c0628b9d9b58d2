package tests

import (
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
)

// renderNotes is what `helm install` prints after installing with vals.
func renderNotes(t *testing.T, vals map[string]any) string {
	t.Helper()
	rel, err := dryRunInstall(chartDir(t), vals)
	if err != nil {
		t.Fatalf("helm install --dry-run: %v", err)
	}
	return rel.Info.Notes
}

// NOTES match the mode: a curl only where Envoy listens and the router
// knows a model server; otherwise what is missing and what to set.
func TestNotesMatchTheMode(t *testing.T) {
	static := m{"config": m{"defaultPool": "qwen", "pools": []any{
		m{"name": "qwen", "models": []any{"qwen3"}, "endpoints": []any{"10.0.0.5:8000"}}}}}
	cases := []struct {
		name    string
		vals    map[string]any
		want    []string
		notWant []string
	}{
		{"static endpoints through the sidecars", m{"router": static},
			[]string{"kubectl port-forward svc/wr-warmroute 8080:80", "curl localhost:8080", `"model":"qwen3"`},
			[]string{"cannot route", "-envoy 8080"}},
		{"static endpoints through an Envoy Deployment", m{"router": static, "envoy": m{"mode": "deployment"}},
			[]string{"svc/wr-warmroute-envoy 8080:80", "curl localhost:8080"},
			[]string{"cannot route"}},
		{"NATS without relays yet", m{"nats": m{"mode": "embedded"}},
			[]string{"cannot route any request yet", "relay sidecar", "wr-warmroute-relay-sidecar", "examples.vllm.enabled=true"},
			[]string{"curl"}},
		{"NATS with the example vLLM and its relays", m{"nats": m{"mode": "embedded"}, "examples": m{"vllm": m{"enabled": true}}},
			[]string{"curl localhost:8080", "wr-warmroute-relay-sidecar"},
			[]string{"cannot route"}},
		{"NATS with the example simulators and their relays", m{"nats": m{"mode": "embedded"}, "examples": m{"sim": m{"enabled": true}}},
			[]string{"curl localhost:8080"},
			[]string{"cannot route"}},
		{"no Envoy with static endpoints", m{"router": static, "envoy": m{"mode": "none"}},
			[]string{"point your gateway's ext_proc at wr-warmroute:9002"},
			[]string{"curl", "localhost:8080", "port-forward", "cannot route"}},
		{"no Envoy and relays to come", m{"envoy": m{"mode": "none"}, "nats": m{"mode": "embedded"}},
			[]string{"cannot route", "relay sidecar", "ext_proc at wr-warmroute:9002"},
			[]string{"curl", "localhost:8080"}},
		{"InferencePool gateway", m{"envoy": m{"mode": "none"}, "inferencePool": m{"enabled": true}},
			[]string{"endpoint picker", "Send requests to your Gateway"},
			[]string{"curl", "localhost:8080", "cannot route"}},
		{"membership from Kubernetes", m{"envoy": m{"mode": "none"}, "router": m{"config": m{"pools": []any{m{"name": "m", "inferencePool": "vllm"}}}}},
			[]string{"ext_proc at wr-warmroute:9002"},
			[]string{"curl", "cannot route"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			notes := renderNotes(t, c.vals)
			for _, w := range c.want {
				if !strings.Contains(notes, w) {
					t.Errorf("NOTES lack %q:\n%s", w, notes)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(notes, w) {
					t.Errorf("NOTES contain %q:\n%s", w, notes)
				}
			}
		})
	}
}

// Every value set's NOTES render, and none offers a curl without Envoy.
func TestNotesRenderForEveryValueSet(t *testing.T) {
	for _, vs := range valueSets {
		t.Run(vs.name, func(t *testing.T) {
			notes := renderNotes(t, vs.vals)
			if !strings.Contains(notes, "is installed as") {
				t.Errorf("NOTES:\n%s", notes)
			}
		})
	}
}

// TestUnroutableInstallFails: an install whose router could learn no model
// server (the chart's defaults among them) fails to render, naming the
// values that fix it, and so do example simulators without the NATS their
// relays announce them on.
func TestUnroutableInstallFails(t *testing.T) {
	none := m{"router": m{"config": m{"pools": nil}}}
	cases := []struct {
		name string
		vals map[string]any
		want []string
	}{
		{"defaults", m{"router": m{"config": m{"pools": []any{m{"name": "my-model", "endpoints": []any{}}}}}},
			[]string{"router.config.pools[0].endpoints", "nats.mode=embedded", "examples.sim.enabled=true", "inferencePool.enabled=true"}},
		{"no pools", none, []string{"router.config.pools[0].endpoints"}},
		{"NATS but relays off", m{"nats": m{"mode": "embedded"}, "relay": m{"enabled": false}}, []string{"router.config.pools[0].endpoints"}},
		{"no Envoy, nothing to route to", m{"envoy": m{"mode": "none"}, "router": m{"config": m{"pools": []any{m{"name": "m"}}}}},
			[]string{"inferencePool.enabled=true"}},
		{"simulators without NATS", m{"examples": m{"sim": m{"enabled": true}}}, []string{"examples.sim.enabled", "nats.mode=embedded"}},
		{"simulators with relays off", m{"nats": m{"mode": "embedded"}, "relay": m{"enabled": false}, "examples": m{"sim": m{"enabled": true}}},
			[]string{"examples.sim.enabled", "relay.enabled=true"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := tryRender(chartDir(t), c.vals)
			if err == nil {
				t.Fatal("rendered an install that cannot route")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not name %q: %v", w, err)
				}
			}
		})
	}
	// The chart's own defaults, as `helm install wr charts/warmroute` uses
	// them (the tests' render adds a pool only when none is given).
	chrt, err := loader.Load(chartDir(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chartutil.ToRenderValues(chrt, map[string]any{}, chartutil.ReleaseOptions{Name: releaseName, Namespace: namespace}, nil); err != nil {
		t.Fatal(err)
	}
	pools, _ := chrt.Values["router"].(map[string]any)["config"].(map[string]any)["pools"].([]any)
	if len(pools) != 1 || len(pools[0].(map[string]any)["endpoints"].([]any)) != 0 || chrt.Values["nats"].(map[string]any)["mode"] != "none" {
		t.Fatalf("the chart's defaults changed (pools %v): update the defaults case above", pools)
	}
}
