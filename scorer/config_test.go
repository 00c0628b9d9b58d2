package scorer

import (
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	good := PoolConfig{Name: "m", Endpoints: []string{"10.0.0.1:8000", "[::1]:9000"}}
	pool := func(mod func(*PoolConfig)) Config {
		p := good
		mod(&p)
		return Config{Pools: []PoolConfig{p}}
	}
	tests := []struct {
		name    string
		cfg     Config
		wantErr string // substring; empty means valid
	}{
		{name: "empty is valid", cfg: Config{}},
		{name: "one pool", cfg: Config{Pools: []PoolConfig{good}}},
		{name: "negative fallbacks", cfg: Config{Fallbacks: -2}, wantErr: "fallbacks"},
		{name: "pool without name", cfg: Config{Pools: []PoolConfig{{}}}, wantErr: "name is required"},
		{name: "duplicate pool", cfg: Config{Pools: []PoolConfig{good, good}}, wantErr: "duplicate pool"},
		{name: "model in two pools", cfg: Config{Pools: []PoolConfig{
			{Name: "a", Models: []string{"x"}}, {Name: "b", Models: []string{"x"}},
		}}, wantErr: `model "x" is already served by pool "a"`},
		{name: "hostname endpoint", cfg: pool(func(p *PoolConfig) { p.Endpoints = []string{"pod:8000"} }), wantErr: "literal IP"},
		{name: "endpoint without port", cfg: pool(func(p *PoolConfig) { p.Endpoints = []string{"10.0.0.1"} }), wantErr: "want ip:port"},
		{name: "endpoint bad port", cfg: pool(func(p *PoolConfig) { p.Endpoints = []string{"10.0.0.1:0"} }), wantErr: "port must be"},
		{name: "unknown default pool", cfg: Config{DefaultPool: "nope"}, wantErr: `defaultPool "nope"`},
		{name: "local dir", cfg: pool(func(p *PoolConfig) { p.Tokenizer.Dir = "/tok" })},
		{name: "remote without dir", cfg: pool(func(p *PoolConfig) { p.Tokenizer.Mode = TokenizerRemote })},
		{name: "drift needs dir", cfg: pool(func(p *PoolConfig) { p.Tokenizer.Mode = TokenizerDrift }), wantErr: `mode "drift" needs dir`},
		{name: "unknown mode", cfg: pool(func(p *PoolConfig) { p.Tokenizer = TokenizerConfig{Dir: "/t", Mode: "guess"} }), wantErr: "want local, remote or drift"},
		{name: "sglang engine", cfg: pool(func(p *PoolConfig) { p.Engine = "sglang" })},
		{name: "vllm engine", cfg: pool(func(p *PoolConfig) { p.Engine = "vllm" })},
		{name: "unknown engine", cfg: pool(func(p *PoolConfig) { p.Engine = "tgi" }), wantErr: `engine "tgi": want vllm or sglang`},
		{name: "negative weight", cfg: Config{Scoring: ScoringConfig{LoadWeight: Float(-1)}}, wantErr: "scoring.loadWeight must be a non-negative"},
		{name: "inference pool", cfg: Config{Pools: []PoolConfig{{Name: "m", InferencePool: "llm/vllm"}}}},
		{name: "inference pool by name", cfg: Config{Pools: []PoolConfig{{Name: "m", InferencePool: "vllm"}}}},
		{name: "inference pool and endpoints", cfg: pool(func(p *PoolConfig) { p.InferencePool = "vllm" }), wantErr: "exclude each other"},
		{name: "inference pool without name", cfg: Config{Pools: []PoolConfig{{Name: "m", InferencePool: "llm/"}}}, wantErr: "want NAME or NAMESPACE/NAME"},
		{name: "inference pool without namespace", cfg: Config{Pools: []PoolConfig{{Name: "m", InferencePool: "/vllm"}}}, wantErr: "want NAME or NAMESPACE/NAME"},
		{name: "inference pool with two slashes", cfg: Config{Pools: []PoolConfig{{Name: "m", InferencePool: "a/b/c"}}}, wantErr: "want NAME or NAMESPACE/NAME"},
		{name: "negative shed", cfg: Config{Scoring: ScoringConfig{ShedWaiting: -1}}, wantErr: "scoring.shedWaiting"},
		{name: "NaN epsilon", cfg: Config{Scoring: ScoringConfig{TieEpsilon: Float(nan())}}, wantErr: "scoring.tieEpsilon"},
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

func nan() float64 {
	zero := 0.0
	return zero / zero
}
