package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/warmroute/warmroute/internal/testpki"
)

// envoyBinary finds a real Envoy: $WARMROUTE_ENVOY, then the repository's
// .cache/envoy-venv (make envoy). Without one the test skips, except in CI.
func envoyBinary(t testing.TB) string {
	t.Helper()
	candidates := []string{os.Getenv("WARMROUTE_ENVOY"), filepath.Join(repoRoot(t), ".cache", "envoy-venv", "bin", "envoy")}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if _, err := os.Stat(c); err == nil {
			return c
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Envoy: run `make envoy` or set WARMROUTE_ENVOY")
	}
	t.Skip("no Envoy: run `make envoy` or set WARMROUTE_ENVOY")
	return ""
}

// renderedEnvoyConfig returns the bootstrap from the chart's Envoy ConfigMap.
func renderedEnvoyConfig(t testing.TB, docs []doc) string {
	t.Helper()
	cm := decodeInto[corev1.ConfigMap](t, find(t, docs, "ConfigMap", releaseName+"-warmroute-envoy"))
	cfg, ok := cm.Data["envoy.yaml"]
	if !ok {
		t.Fatal("envoy ConfigMap has no envoy.yaml")
	}
	return cfg
}

// TestEnvoyConfigValidates runs `envoy --mode validate` on the bootstrap each
// value set with an Envoy renders.
func TestEnvoyConfigValidates(t *testing.T) {
	envoy := envoyBinary(t)
	for _, vs := range valueSets {
		docs := render(t, vs.vals)
		if !hasDoc(docs, "ConfigMap", releaseName+"-warmroute-envoy") {
			continue
		}
		t.Run(vs.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "envoy.yaml")
			if err := os.WriteFile(path, []byte(withTestMTLSFiles(t, renderedEnvoyConfig(t, docs))), 0o600); err != nil {
				t.Fatal(err)
			}
			validateEnvoy(t, envoy, path, true)
		})
	}
}

// withTestMTLSFiles points a bootstrap's mutual TLS certificate and key,
// which Envoy loads even to validate, at a throwaway pair made for the test.
func withTestMTLSFiles(t *testing.T, cfg string) string {
	t.Helper()
	const dir = "/etc/envoy/mtls/"
	if !strings.Contains(cfg, dir) {
		return cfg
	}
	pair := testpki.New(t, "chart").Client("envoy")
	return strings.NewReplacer(dir+"tls.crt", pair.CertFile, dir+"tls.key", pair.KeyFile).Replace(cfg)
}

// A bootstrap Envoy refuses (FULL_DUPLEX_STREAMED without trailers) must fail
// validation, or the test above proves nothing.
func TestEnvoyValidateRejects(t *testing.T) {
	envoy := envoyBinary(t)
	cfg := renderedEnvoyConfig(t, render(t, m{}))
	bad := strings.Replace(cfg, "request_trailer_mode: SEND", "request_trailer_mode: SKIP", 1)
	if bad == cfg {
		t.Fatal("rendered config has no request_trailer_mode: SEND")
	}
	path := filepath.Join(t.TempDir(), "envoy.yaml")
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	validateEnvoy(t, envoy, path, false)
}

func validateEnvoy(t *testing.T, envoy, path string, wantOK bool) {
	t.Helper()
	out, err := exec.Command(envoy, "--mode", "validate", "-c", path, "--disable-hot-restart",
		"--log-level", "warn").CombinedOutput()
	if (err == nil) != wantOK {
		t.Errorf("envoy --mode validate: err=%v, want ok=%v\n%s", err, wantOK, out)
	}
}

func hasDoc(docs []doc, kind, name string) bool {
	for _, d := range docs {
		if d.Kind == kind && d.Name == name {
			return true
		}
	}
	return false
}

// The Envoy settings the README documents must reach the bootstrap.
func TestEnvoyConfigFollowsValues(t *testing.T) {
	cases := []struct {
		name string
		vals map[string]any
		want []string
	}{
		{"fail closed sidecar", m{}, []string{"failure_mode_allow: false", "request_body_mode: FULL_DUPLEX_STREAMED",
			"type: ORIGINAL_DST", "http_header_name: x-gateway-destination-endpoint", "address: 127.0.0.1"}},
		{"fail open deployment", m{"envoy": m{"mode": "deployment", "failOpen": true, "requestBodyMode": "BUFFERED"}},
			[]string{"failure_mode_allow: true", "request_body_mode: BUFFERED", "request_trailer_mode: SKIP",
				"type: STRICT_DNS", "address: wr-warmroute-headless.llm.svc"}},
		{"mutual TLS to the router", m{"router": m{"mtls": m{"existingSecret": "envoy-mtls"}}},
			[]string{"UpstreamTlsContext", "certificate_chain: { filename: /etc/envoy/mtls/tls.crt }",
				"private_key: { filename: /etc/envoy/mtls/tls.key }"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var boot map[string]any
			cfg := renderedEnvoyConfig(t, render(t, c.vals))
			if err := yaml.Unmarshal([]byte(cfg), &boot); err != nil {
				t.Fatalf("parsing bootstrap: %v", err)
			}
			for _, w := range c.want {
				if !strings.Contains(cfg, w) {
					t.Errorf("bootstrap lacks %q", w)
				}
			}
		})
	}
}
