package tests

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
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
			if !reflect.DeepEqual(cfg.Events, c.want) {
				t.Errorf("events = %+v, want %+v", cfg.Events, c.want)
			}
		})
	}
}

// router.mtls wires mutual TLS: the router requires client certificates of
// the Secret's CA (serving TLS, self-signed unless a certificate is given)
// and mounts only ca.crt; Envoy presents the Secret's tls.crt and tls.key.
func TestServeConfigMutualTLS(t *testing.T) {
	cases := []struct {
		name string
		vals map[string]any
		want router.TLSConfig
	}{
		{"off by default", m{}, router.TLSConfig{}},
		{"self-signed server", m{"router": m{"mtls": m{"existingSecret": "s"}}},
			router.TLSConfig{SelfSigned: true, ClientCAFile: "/etc/warmroute/mtls/ca.crt"}},
		{"given server certificate", m{"router": m{"mtls": m{"existingSecret": "s"},
			"config": m{"tls": m{"certFile": "/c.pem", "keyFile": "/k.pem"}}}},
			router.TLSConfig{CertFile: "/c.pem", KeyFile: "/k.pem", ClientCAFile: "/etc/warmroute/mtls/ca.crt"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := router.Parse([]byte(renderedServeConfig(t, render(t, c.vals))), "serve.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if cfg.TLS != c.want {
				t.Errorf("tls = %+v, want %+v", cfg.TLS, c.want)
			}
		})
	}
}

// Each side mounts only its part of the mutual TLS Secret: the router the
// CA, Envoy its certificate and key.
func TestMutualTLSMounts(t *testing.T) {
	docs := render(t, m{"router": m{"mtls": m{"existingSecret": "envoy-mtls"}}})
	dep := decodeInto[appsv1.Deployment](t, find(t, docs, "Deployment", releaseName+"-warmroute-router"))
	spec := dep.Spec.Template.Spec
	want := map[string][]string{"mtls-ca": {"ca.crt"}, "envoy-mtls": {"tls.crt", "tls.key"}}
	for name, keys := range want {
		var got []string
		for _, v := range spec.Volumes {
			if v.Name == name && v.Secret != nil && v.Secret.SecretName == "envoy-mtls" {
				for _, it := range v.Secret.Items {
					got = append(got, it.Key)
				}
			}
		}
		if !slices.Equal(got, keys) {
			t.Errorf("volume %s holds %v of the Secret, want %v", name, got, keys)
		}
	}
	mounts := map[string]string{"router": "mtls-ca", "envoy": "envoy-mtls"}
	for _, c := range spec.Containers {
		found := false
		for _, vm := range c.VolumeMounts {
			if vm.Name == "mtls-ca" || vm.Name == "envoy-mtls" {
				if vm.Name != mounts[c.Name] {
					t.Errorf("container %s mounts %s", c.Name, vm.Name)
				}
				found = true
			}
		}
		if _, ok := mounts[c.Name]; ok && !found {
			t.Errorf("container %s does not mount %s", c.Name, mounts[c.Name])
		}
	}
}

// Fallbacks need a proxy that reads the endpoint list. The chart's Envoy
// does (override_host) when it knows the model servers: from
// envoy.modelServers.dnsName, the example simulators' headless Service or
// static endpoints; without any, rendering fails naming the value to set.
// With envoy.mode=none the gateway is the user's choice.
func TestFallbacksNeedKnownModelServers(t *testing.T) {
	withFallbacks := func(extra m) m {
		v := m{"router": m{"config": m{"fallbacks": 2}}}
		for k, x := range extra {
			v[k] = x
		}
		return v
	}
	for _, mode := range []string{"sidecar", "deployment"} {
		// Relays announce the endpoints to the router, but Envoy knows none.
		_, err := tryRender(chartDir(t), withFallbacks(m{"envoy": m{"mode": mode}, "nats": m{"mode": "embedded"}}))
		if err == nil || !strings.Contains(err.Error(), "envoy.modelServers.dnsName") {
			t.Errorf("envoy.mode=%s, fallbacks 2, no known endpoints: err %v, want a failure naming envoy.modelServers.dnsName", mode, err)
		}
	}
	cases := []struct {
		name string
		vals m
		want []string
	}{
		{"dns name", withFallbacks(m{"envoy": m{"modelServers": m{"dnsName": "vllm-headless.llm.svc.cluster.local", "port": 8000}}}),
			[]string{"type: STRICT_DNS", "address: vllm-headless.llm.svc.cluster.local, port_value: 8000"}},
		{"example simulators", withFallbacks(m{"nats": m{"mode": "embedded"}, "examples": m{"sim": m{"enabled": true}}}),
			[]string{"type: STRICT_DNS", "address: wr-warmroute-sim.llm.svc.cluster.local, port_value: 8000"}},
		{"static endpoints", m{"router": m{"config": m{"fallbacks": 1, "defaultPool": "m",
			"pools": []any{m{"name": "m", "endpoints": []any{"10.0.0.5:8000", "10.0.0.6:8001"}}}}}},
			[]string{"type: STATIC", "address: 10.0.0.5, port_value: 8000", "address: 10.0.0.6, port_value: 8001", "num_retries: 1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := renderedEnvoyConfig(t, render(t, c.vals))
			for _, w := range append(c.want, "envoy.load_balancing_policies.override_host", "retry_policy") {
				if !strings.Contains(cfg, w) {
					t.Errorf("Envoy config lacks %q", w)
				}
			}
			if strings.Contains(cfg, "ORIGINAL_DST") {
				t.Error("Envoy config with fallbacks keeps the ORIGINAL_DST cluster, which cannot use the list")
			}
		})
	}
	if cfg := renderedEnvoyConfig(t, render(t, m{})); !strings.Contains(cfg, "type: ORIGINAL_DST") || strings.Contains(cfg, "retry_policy") {
		t.Error("without fallbacks the model servers are not the ORIGINAL_DST cluster without retries")
	}
	raw := renderedServeConfig(t, render(t, m{"envoy": m{"mode": "none"}, "router": m{"config": m{"fallbacks": 2}}}))
	cfg, err := router.Parse([]byte(raw), "serve.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Fallbacks != 2 {
		t.Errorf("envoy.mode=none: fallbacks %d, want 2", cfg.Fallbacks)
	}
}
