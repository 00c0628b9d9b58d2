package tests

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/router"
)

// renderedServeConfig returns the router's config file from its ConfigMap.
func renderedServeConfig(t testing.TB, docs []doc) string {
	t.Helper()
	cm := decodeInto[corev1.ConfigMap](t, find(t, docs, "ConfigMap", releaseName+"-warmroute-config"))
	cfg, ok := cm.Data["serve.yaml"]
	if !ok {
		t.Fatal("router ConfigMap has no serve.yaml")
	}
	return cfg
}

// TestServeConfigDecodes decodes each value set's router configuration the
// way `warmroute serve --config` does: strictly into router.Config, then
// Validate.
func TestServeConfigDecodes(t *testing.T) {
	for _, vs := range valueSets {
		t.Run(vs.name, func(t *testing.T) {
			raw := renderedServeConfig(t, render(t, vs.vals))
			cfg, err := router.Parse([]byte(raw), "serve.yaml")
			if err != nil {
				t.Fatalf("decoding rendered serve.yaml: %v\n%s", err, raw)
			}
			if err := cfg.Validate(); err != nil {
				t.Errorf("rendered serve.yaml is invalid: %v\n%s", err, raw)
			}
		})
	}
}

// The listen addresses come from router.ports so Services and probes match.
func TestServeConfigAddresses(t *testing.T) {
	raw := renderedServeConfig(t, render(t, m{"router": m{"ports": m{"grpc": 19002, "admin": 19090}}}))
	cfg, err := router.Parse([]byte(raw), "serve.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.GRPCAddr != ":19002" || cfg.AdminAddr != ":19090" {
		t.Errorf("addresses %q %q, want :19002 :19090", cfg.GRPCAddr, cfg.AdminAddr)
	}
}

// The NATS choice reaches the router's events settings.
func TestServeConfigEvents(t *testing.T) {
	cases := []struct {
		name string
		vals map[string]any
		want subscriber.Config
	}{
		{"no nats disables events", m{}, subscriber.Config{Disabled: true}},
		{"external with secret", m{"nats": m{"mode": "external", "external": m{"url": "nats://n:4222", "existingSecret": "s"}}},
			subscriber.Config{Config: bus.Config{URL: "nats://n:4222", CredsFile: "/etc/warmroute/nats/nats.creds"}}},
		{"embedded jetstream", m{"nats": m{"mode": "embedded"}},
			subscriber.Config{Config: bus.Config{URL: "nats://wr-warmroute-nats:4222", JetStream: bus.JetStreamConfig{Enabled: true}}}},
		{"user events settings kept", m{"nats": m{"mode": "external", "external": m{"url": "nats://n:4222"}},
			"router": m{"config": m{"events": m{"heartbeatMisses": 5}}}},
			subscriber.Config{Config: bus.Config{URL: "nats://n:4222"}, HeartbeatMisses: 5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := router.Parse([]byte(renderedServeConfig(t, render(t, c.vals))), "serve.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Events != c.want {
				t.Errorf("events = %+v, want %+v", cfg.Events, c.want)
			}
		})
	}
}
