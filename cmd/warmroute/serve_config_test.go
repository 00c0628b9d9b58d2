package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warmroute/warmroute/extproc"
	"github.com/warmroute/warmroute/router"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "warmroute.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const sampleConfig = `
grpcAddr: 127.0.0.1:7000
maxBodyBytes: 1048576
shutdownGrace: 3s
pools:
- name: llama
  models: [meta-llama/Llama-3.1-8B]
  endpoints: [10.0.0.1:8000, 10.0.0.2:8000]
`

func TestParseServeConfig(t *testing.T) {
	file := writeConfig(t, sampleConfig)
	tests := []struct {
		name    string
		args    []string
		check   func(t *testing.T, c router.Config)
		wantErr string
	}{
		{name: "file only", args: []string{"--config", file}, check: func(t *testing.T, c router.Config) {
			if c.GRPCAddr != "127.0.0.1:7000" || c.MaxBodyBytes != 1<<20 || c.ShutdownGrace.D().String() != "3s" {
				t.Errorf("file values not read: %+v", c)
			}
			if c.AdminAddr != router.DefaultAdminAddr {
				t.Errorf("admin addr = %q, want default", c.AdminAddr)
			}
			if len(c.Pools) != 1 || len(c.Pools[0].Endpoints) != 2 {
				t.Errorf("pools = %+v", c.Pools)
			}
		}},
		{name: "flags override file", args: []string{"--config", file, "--grpc-addr", ":1", "--endpoints", "m=10.0.0.9:80, 10.0.0.8:80", "--fallbacks", "1"},
			check: func(t *testing.T, c router.Config) {
				if c.GRPCAddr != ":1" || c.Fallbacks != 1 {
					t.Errorf("flags not applied: %+v", c)
				}
				if len(c.Pools) != 1 || c.Pools[0].Name != "m" || strings.Join(c.Pools[0].Endpoints, ",") != "10.0.0.9:80,10.0.0.8:80" {
					t.Errorf("endpoints flag not applied: %+v", c.Pools)
				}
			}},
		{name: "flag zero value overrides file", args: []string{"--config", file, "--max-body-bytes", "0"}, check: func(t *testing.T, c router.Config) {
			if c.MaxBodyBytes != extproc.DefaultMaxBodyBytes {
				t.Errorf("max body = %d, want default after explicit 0", c.MaxBodyBytes)
			}
		}},
		{name: "repeated endpoints", args: []string{"--endpoints", "a=10.0.0.1:1", "--endpoints", "b=10.0.0.2:1"}, check: func(t *testing.T, c router.Config) {
			if len(c.Pools) != 2 {
				t.Errorf("pools = %+v, want two", c.Pools)
			}
		}},
		{name: "unknown file field", args: []string{"--config", writeConfig(t, "grpcAdr: :1\n")}, wantErr: "unknown field"},
		{name: "missing file", args: []string{"--config", "/nonexistent/w.yaml"}, wantErr: "reading config"},
		{name: "bad yaml", args: []string{"--config", writeConfig(t, "pools: [\n")}, wantErr: "parsing config"},
		{name: "invalid endpoint", args: []string{"--endpoints", "m=pod-a:8000"}, wantErr: "literal IP"},
		{name: "malformed endpoints flag", args: []string{"--endpoints", "10.0.0.1:8000"}, wantErr: "MODEL=IP:PORT"},
		{name: "stray argument", args: []string{"extra"}, wantErr: "unexpected arguments"},
		{name: "cert without key", args: []string{"--tls-cert", "c.pem"}, wantErr: "certFile and keyFile"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, err := parseServeConfig(tt.args, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}
