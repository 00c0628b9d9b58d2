package tests

import (
	"strings"
	"testing"
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
		{"defaults cannot route", m{},
			[]string{"cannot route any request yet", "router.config.pools[].endpoints", "nats.mode=embedded"},
			[]string{"curl", "localhost:8080"}},
		{"example sims without relays cannot route", m{"examples": m{"sim": m{"enabled": true}}},
			[]string{"cannot route", "simulators get their relays only with NATS", "router.config.pools[].endpoints"},
			[]string{"curl"}},
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
		{"no Envoy and nothing to route to", m{"envoy": m{"mode": "none"}},
			[]string{"cannot route", "ext_proc at wr-warmroute:9002"},
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
