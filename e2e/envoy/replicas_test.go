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

// TestRenderReplicas checks that ExtraRouterPorts puts every router replica
// in the ext_proc cluster, and that a bad extra port is refused.
func TestRenderReplicas(t *testing.T) {
	tests := []struct {
		name    string
		tmpl    envoy.Template
		extra   []int
		want    int // router endpoints in the warmroute cluster
		wantErr error
	}{
		{name: "one router", tmpl: envoy.FullDuplex, want: 1},
		{name: "two routers full duplex", tmpl: envoy.FullDuplex, extra: []int{19003}, want: 2},
		{name: "three routers buffered", tmpl: envoy.Buffered, extra: []int{19003, 19004}, want: 3},
		{name: "extra port out of range", tmpl: envoy.FullDuplex, extra: []int{0}, wantErr: envoy.ErrInvalidParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := good
			p.ExtraRouterPorts = tt.extra
			out, err := envoy.Render(tt.tmpl, p)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Render() error = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			_, cluster, ok := strings.Cut(string(out), "- name: warmroute\n")
			if !ok {
				t.Fatal("output has no warmroute cluster")
			}
			if got := strings.Count(cluster, "- endpoint:"); got != tt.want {
				t.Errorf("warmroute cluster has %d endpoints, want %d", got, tt.want)
			}
			for _, port := range []string{"19002", "19003", "19004"}[:tt.want] {
				if !strings.Contains(cluster, "port_value: "+port) {
					t.Errorf("warmroute cluster lacks port %s", port)
				}
			}
		})
	}
}

// TestEnvoyAcceptsReplicaConfigs asks the real Envoy to validate both ext_proc
// templates with two router replicas.
func TestEnvoyAcceptsReplicaConfigs(t *testing.T) {
	bin := harness.EnvoyForTest(t)
	p := good
	p.ExtraRouterPorts = []int{19003}
	p.AccessLog, p.SubsetHintHeader = true, true
	dir := t.TempDir()
	for _, tmpl := range []envoy.Template{envoy.Buffered, envoy.FullDuplex} {
		t.Run(string(tmpl), func(t *testing.T) {
			out, err := envoy.Render(tmpl, p)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, string(tmpl)+"_replicas.yaml")
			if err := os.WriteFile(path, out, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := harness.ValidateEnvoyConfig(context.Background(), bin, path); err != nil {
				t.Fatal(err)
			}
		})
	}
}
