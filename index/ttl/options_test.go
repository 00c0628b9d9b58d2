package ttl

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string // substring of the error; "" means valid
	}{
		{"zero value is every default", Config{}, ""},
		{"adaptive", Config{Mode: ModeAdaptive, Percentile: "p95"}, ""},
		{"unknown mode", Config{Mode: "auto"}, "mode must be"},
		{"bad percentile", Config{Percentile: "99"}, "percentile"},
		{"negative jitter", Config{Jitter: dur(-time.Second)}, "jitter must not be negative"},
		{"static above cap", Config{Static: dur(6 * time.Second)}, "min <= static <= maxStale"},
		{"min above static", Config{Min: dur(3 * time.Second)}, "min <= static <= maxStale"},
		{"negative max decisions", Config{MaxDecisions: -1}, "maxDecisions must not be negative"},
		{"min samples beyond window", Config{MinSamples: 5000}, "minSamples (5000) must not exceed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate = %v, want ErrOptions mentioning %q", err, tt.want)
			}
			if _, err := New(Options{Config: tt.cfg}); !errors.Is(err, ErrOptions) {
				t.Fatalf("New accepted an invalid config: %v", err)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	c := Config{}.WithDefaults()
	if c.Mode != ModeStatic || c.Static.D() != 2*time.Second || c.Percentile != "p99" || c.Replica != DefaultReplica {
		t.Fatalf("defaults %+v", c)
	}
	h := newHarness(t, Config{})
	if got := h.TTL("e", "m"); got != 2*time.Second {
		t.Fatalf("default TTL %v", got)
	}
	if got := h.Trust("e", "m"); got != 1 {
		t.Fatalf("default trust %v", got)
	}
}

func TestConfigJSON(t *testing.T) {
	var c Config
	in := `{"mode":"adaptive","static":"1.5s","percentile":"p95","jitter":0.1,"maxStale":"4s"}`
	if err := json.Unmarshal([]byte(in), &c); err != nil {
		t.Fatal(err)
	}
	if c.Mode != ModeAdaptive || c.Static.D() != 1500*time.Millisecond || c.Jitter.D() != 100*time.Millisecond || c.Validate() != nil {
		t.Fatalf("decoded %+v", c)
	}
}

func TestNewRegistersOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := New(Options{Registerer: reg}); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Options{Registerer: reg}); err == nil {
		t.Fatal("a second controller on one registry registered silently")
	}
	if _, err := New(Options{}); err != nil {
		t.Fatalf("nil registerer: %v", err)
	}
}
