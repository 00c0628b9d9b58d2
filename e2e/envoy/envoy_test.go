package envoy_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warmroute/warmroute/e2e/envoy"
	"github.com/warmroute/warmroute/e2e/harness"
)

var good = envoy.Params{ListenPort: 18080, AdminPort: 19901, RouterPort: 19002, UpstreamPort: 18000}

// withFallbacks is good with two known model servers and one retry.
var withFallbacks = envoy.Params{ListenPort: 18080, AdminPort: 19901, RouterPort: 19002,
	ModelServers: []envoy.HostPort{{Host: "127.0.0.1", Port: 18001}, {Host: "127.0.0.1", Port: 18002}}, Retries: 1}

func TestRender(t *testing.T) {
	tests := []struct {
		name     string
		tmpl     envoy.Template
		params   envoy.Params
		want     []string // substrings of the output
		dontWant []string
		wantErr  error
	}{
		{name: "full duplex", tmpl: envoy.FullDuplex, params: good, want: []string{
			"port_value: 18080", "port_value: 19901", "port_value: 19002",
			"request_body_mode: FULL_DUPLEX_STREAMED", "request_trailer_mode: SEND",
			"request_body_buffer_limit: 16777216", "response_body_mode: STREAMED"}, dontWant: []string{"access_log", "lua"}},
		{name: "buffered", tmpl: envoy.Buffered, params: good, want: []string{
			"request_body_mode: BUFFERED", "request_trailer_mode: SKIP", "response_body_mode: STREAMED"}},
		{name: "direct", tmpl: envoy.Direct, params: good, want: []string{"port_value: 18000"},
			dontWant: []string{"envoy.filters.http.ext_proc", "19002"}},
		{name: "test extras", tmpl: envoy.FullDuplex,
			params: envoy.Params{ListenPort: 1, AdminPort: 2, RouterPort: 3, AccessLog: true, SubsetHintHeader: true, BufferLimitBytes: 1234},
			want:   []string{"access_log", "x-e2e-subset-hint", "request_body_buffer_limit: 1234"}},
		{name: "mutual TLS to the router", tmpl: envoy.Buffered,
			params: envoy.Params{ListenPort: 1, AdminPort: 2, RouterPort: 3,
				RouterTLS: &envoy.UpstreamTLS{CAFile: "/pki/ca.pem", CertFile: "/pki/envoy.pem", KeyFile: "/pki/envoy-key.pem"}},
			want: []string{"UpstreamTlsContext", `trusted_ca: { filename: "/pki/ca.pem" }`,
				`certificate_chain: { filename: "/pki/envoy.pem" }`, `private_key: { filename: "/pki/envoy-key.pem" }`}},
		{name: "TLS without client certificate", tmpl: envoy.FullDuplex,
			params: envoy.Params{ListenPort: 1, AdminPort: 2, RouterPort: 3, RouterTLS: &envoy.UpstreamTLS{CAFile: "/pki/ca.pem"}},
			want:   []string{"UpstreamTlsContext"}, dontWant: []string{"tls_certificates"}},
		{name: "plaintext to the router", tmpl: envoy.FullDuplex, params: good, dontWant: []string{"UpstreamTlsContext"}},
		{name: "TLS without CA", tmpl: envoy.FullDuplex,
			params:  envoy.Params{ListenPort: 1, AdminPort: 2, RouterPort: 3, RouterTLS: &envoy.UpstreamTLS{CertFile: "c", KeyFile: "k"}},
			wantErr: envoy.ErrInvalidParams},
		{name: "missing router port", tmpl: envoy.Buffered, params: envoy.Params{ListenPort: 1, AdminPort: 2},
			wantErr: envoy.ErrInvalidParams},
		{name: "port out of range", tmpl: envoy.Direct, params: envoy.Params{ListenPort: 1, AdminPort: 70000, UpstreamPort: 3},
			wantErr: envoy.ErrInvalidParams},
		{name: "negative buffer", tmpl: envoy.Direct, params: envoy.Params{ListenPort: 1, AdminPort: 2, UpstreamPort: 3, BufferLimitBytes: -1},
			wantErr: envoy.ErrInvalidParams},
		{name: "override host with fallbacks", tmpl: envoy.FullDuplex, params: withFallbacks,
			want: []string{"type: STATIC", "envoy.load_balancing_policies.override_host",
				"key: x-gateway-destination-endpoint }", "socket_address: { address: 127.0.0.1, port_value: 18001 }",
				"socket_address: { address: 127.0.0.1, port_value: 18002 }", "num_retries: 1"},
			dontWant: []string{"type: ORIGINAL_DST"}},
		{name: "original destination without fallbacks", tmpl: envoy.Buffered, params: good,
			want: []string{"ORIGINAL_DST"}, dontWant: []string{"override_host", "retry_policy"}},
		{name: "retries without model servers", tmpl: envoy.Buffered, params: envoy.Params{ListenPort: 1, AdminPort: 2, RouterPort: 3, Retries: 1},
			wantErr: envoy.ErrInvalidParams},
		{name: "model server without port", tmpl: envoy.Buffered,
			params:  envoy.Params{ListenPort: 1, AdminPort: 2, RouterPort: 3, ModelServers: []envoy.HostPort{{Host: "127.0.0.1"}}},
			wantErr: envoy.ErrInvalidParams},
		{name: "unknown template", tmpl: "nope.yaml.tmpl", params: good, wantErr: envoy.ErrUnknownTemplate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := envoy.Render(tt.tmpl, tt.params)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Render() error = %v, want %v", err, tt.wantErr)
			}
			for _, s := range tt.want {
				if !strings.Contains(string(out), s) {
					t.Errorf("output lacks %q", s)
				}
			}
			for _, s := range tt.dontWant {
				if strings.Contains(string(out), s) {
					t.Errorf("output contains %q", s)
				}
			}
		})
	}
}

// TestEnvoyAcceptsConfigs asks the real Envoy to validate standalone.yaml and
// every template in every variant the harness renders.
func TestEnvoyAcceptsConfigs(t *testing.T) {
	bin := harness.EnvoyForTest(t)
	configs := map[string][]byte{"standalone.yaml": envoy.Standalone(), "fallbacks.yaml": envoy.Fallbacks()}
	withExtras := good
	withExtras.AccessLog, withExtras.SubsetHintHeader = true, true
	for _, tmpl := range envoy.Templates() {
		variants := map[string]envoy.Params{"": good, "_extras": withExtras}
		if tmpl != envoy.Direct {
			variants["_fallbacks"] = withFallbacks
		}
		for suffix, p := range variants {
			out, err := envoy.Render(tmpl, p)
			if err != nil {
				t.Fatal(err)
			}
			configs[string(tmpl)+suffix] = out
		}
	}
	dir := t.TempDir()
	for name, conf := range configs {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name+".yaml")
			if err := os.WriteFile(path, conf, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := harness.ValidateEnvoyConfig(context.Background(), bin, path); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestEnvoyRejectsBrokenConfig shows the validation above can fail: Envoy
// refuses FULL_DUPLEX_STREAMED without request trailers.
func TestEnvoyRejectsBrokenConfig(t *testing.T) {
	bin := harness.EnvoyForTest(t)
	broken := strings.Replace(string(envoy.Standalone()), "request_trailer_mode: SEND", "request_trailer_mode: SKIP", 1)
	path := filepath.Join(t.TempDir(), "broken.yaml")
	if err := os.WriteFile(path, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	err := harness.ValidateEnvoyConfig(context.Background(), bin, path)
	if err == nil || !strings.Contains(err.Error(), "request_trailer_mode") {
		t.Fatalf("ValidateEnvoyConfig() = %v, want a complaint about request_trailer_mode", err)
	}
}
