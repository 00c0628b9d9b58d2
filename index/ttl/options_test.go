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
		{"static above cap", Config{Static: dur(6 * time.Second)}, "static <= maxStale"},
		{"adaptive floor above cap", Config{Mode: ModeAdaptive, Jitter: dur(6 * time.Second), Static: dur(time.Second)}, "jitter (its floor) <= maxStale"},
		{"negative step", Config{Step: dur(-time.Second)}, "step must not be negative"},
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
	if c.Mode != ModeStatic || c.Static.D() != 2*time.Second || c.Percentile != "p99" || c.MinSamples != DefaultMinSamples {
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
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(Options{Metrics: m}); err != nil {
		t.Fatal(err)
	}
	if _, err := NewMetrics(reg); err == nil {
		t.Fatal("a second set of ttl metrics on one registry registered silently")
	}
	if _, err := New(Options{}); err != nil {
		t.Fatalf("no metrics: %v", err)
	}
}

func TestOptionsDerive(t *testing.T) {
	s := Options{Config: Config{Jitter: dur(150 * time.Millisecond), Interval: dur(2 * time.Second)},
		Grace: 3 * time.Second}.resolve()
	if s.Min != 150*time.Millisecond || s.Hysteresis != 150*time.Millisecond {
		t.Fatalf("floor %v and dead band %v, want the jitter", s.Min, s.Hysteresis)
	}
	if s.Window != 60*time.Second || s.Grace != 3*time.Second || s.Replica != DefaultReplica {
		t.Fatalf("window %v grace %v replica %q", s.Window, s.Grace, s.Replica)
	}
	if s.MaxDecisions != DefaultMaxDecisions || s.WindowSamples != DefaultWindowSamples || s.MaxSeries != DefaultMaxSeries {
		t.Fatalf("limits %+v", s)
	}
	if w := (Options{Limits: Limits{Window: time.Minute}}).resolve().Window; w != time.Minute {
		t.Fatalf("window override %v", w)
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"negative grace", Options{Grace: -time.Second}, "grace must not be negative"},
		{"negative limit", Options{Limits: Limits{MaxDecisions: -1}}, "limits must not be negative"},
		{"min samples beyond a small window", Options{Config: Config{MinSamples: 50}, Limits: Limits{WindowSamples: 10}},
			"minSamples (50) must not exceed windowSamples (10)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.opts)
			if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New = %v, want ErrOptions mentioning %q", err, tt.want)
			}
		})
	}
}
