package api

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	good := PoolConfig{Name: "m", Endpoints: []string{"10.0.0.1:8000", "[::1]:9000"}}
	tests := []struct {
		name    string
		cfg     ServeConfig
		wantErr string // substring; empty means valid
	}{
		{name: "empty is valid", cfg: ServeConfig{}},
		{name: "one pool", cfg: ServeConfig{Pools: []PoolConfig{good}}},
		{name: "negative body limit", cfg: ServeConfig{MaxBodyBytes: -1}, wantErr: "maxBodyBytes"},
		{name: "negative response limit", cfg: ServeConfig{MaxResponseBytes: -1}, wantErr: "maxResponseBytes"},
		{name: "negative fallbacks", cfg: ServeConfig{Fallbacks: -2}, wantErr: "fallbacks"},
		{name: "cert without key", cfg: ServeConfig{TLS: TLSConfig{CertFile: "c.pem"}}, wantErr: "certFile and keyFile"},
		{name: "pool without name", cfg: ServeConfig{Pools: []PoolConfig{{}}}, wantErr: "name is required"},
		{name: "duplicate pool", cfg: ServeConfig{Pools: []PoolConfig{good, good}}, wantErr: "duplicate pool"},
		{name: "model in two pools", cfg: ServeConfig{Pools: []PoolConfig{
			{Name: "a", Models: []string{"x"}}, {Name: "b", Models: []string{"x"}},
		}}, wantErr: `model "x" is already served by pool "a"`},
		{name: "hostname endpoint", cfg: ServeConfig{Pools: []PoolConfig{{Name: "m", Endpoints: []string{"pod:8000"}}}}, wantErr: "literal IP"},
		{name: "endpoint without port", cfg: ServeConfig{Pools: []PoolConfig{{Name: "m", Endpoints: []string{"10.0.0.1"}}}}, wantErr: "want ip:port"},
		{name: "endpoint bad port", cfg: ServeConfig{Pools: []PoolConfig{{Name: "m", Endpoints: []string{"10.0.0.1:0"}}}}, wantErr: "port must be"},
		{name: "ttl grace set", cfg: ServeConfig{TTL: TTLConfig{Grace: Duration(time.Second)}}, wantErr: "index.grace"},
		{name: "bad ttl mode", cfg: ServeConfig{TTL: TTLConfig{Mode: "sometimes"}}, wantErr: "mode must be"},
		{name: "unknown default pool", cfg: ServeConfig{DefaultPool: "nope"}, wantErr: `defaultPool "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestWithDefaults(t *testing.T) {
	c := ServeConfig{}.WithDefaults()
	if c.GRPCAddr != DefaultGRPCAddr || c.AdminAddr != DefaultAdminAddr || c.MaxBodyBytes != DefaultMaxBodyBytes ||
		c.ShutdownGrace.D() != DefaultShutdownGrace || c.MaxGRPCMessageBytes != DefaultMaxBodyBytes+1<<20 {
		t.Fatalf("WithDefaults() = %+v", c)
	}
	kept := ServeConfig{GRPCAddr: ":1", MaxBodyBytes: 10}.WithDefaults()
	if kept.GRPCAddr != ":1" || kept.MaxBodyBytes != 10 {
		t.Fatalf("WithDefaults overwrote set fields: %+v", kept)
	}
}

func TestDurationJSON(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{in: `"1.5s"`, want: 1500 * time.Millisecond},
		{in: `"250ms"`, want: 250 * time.Millisecond},
		{in: `2`, want: 2 * time.Second},
		{in: `0.25`, want: 250 * time.Millisecond},
		{in: `"soon"`, wantErr: true},
		{in: `true`, wantErr: true},
		{in: `{`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var d Duration
			err := json.Unmarshal([]byte(tt.in), &d)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Unmarshal(%s) err = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if !tt.wantErr && d.D() != tt.want {
				t.Fatalf("Unmarshal(%s) = %v, want %v", tt.in, d.D(), tt.want)
			}
		})
	}
	b, err := json.Marshal(Duration(1500 * time.Millisecond))
	if err != nil || string(b) != `"1.5s"` {
		t.Fatalf("Marshal = %s, %v", b, err)
	}
}
