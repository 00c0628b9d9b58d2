package api

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestValidateRouting(t *testing.T) {
	pool := func(mod func(*PoolConfig)) ServeConfig {
		p := PoolConfig{Name: "m", Endpoints: []string{"10.0.0.1:8000"}}
		mod(&p)
		return ServeConfig{Pools: []PoolConfig{p}}
	}
	tests := []struct {
		name    string
		cfg     ServeConfig
		wantErr string
	}{
		{name: "no tokenizer", cfg: pool(func(*PoolConfig) {})},
		{name: "local dir", cfg: pool(func(p *PoolConfig) { p.Tokenizer.Dir = "/tok" })},
		{name: "remote without dir", cfg: pool(func(p *PoolConfig) { p.Tokenizer.Mode = TokenizerRemote })},
		{name: "drift needs dir", cfg: pool(func(p *PoolConfig) { p.Tokenizer.Mode = TokenizerDrift }), wantErr: `mode "drift" needs dir`},
		{name: "unknown mode", cfg: pool(func(p *PoolConfig) { p.Tokenizer = TokenizerConfig{Dir: "/t", Mode: "guess"} }), wantErr: "want local, remote or drift"},
		{name: "sample rate", cfg: pool(func(p *PoolConfig) { p.Tokenizer = TokenizerConfig{Dir: "/t", DriftSampleRate: 2} }), wantErr: "driftSampleRate"},
		{name: "block size matches index", cfg: pool(func(p *PoolConfig) { p.BlockSize = 16 })},
		{name: "block size differs", cfg: pool(func(p *PoolConfig) { p.BlockSize = 32 }), wantErr: "blockSize 32 differs from index.blockSize 16"},
		{name: "negative pool weight", cfg: pool(func(p *PoolConfig) { p.Scoring = &ScoringConfig{LoadWeight: Float(-1)} }), wantErr: "loadWeight must be a non-negative"},
		{name: "negative global epsilon", cfg: ServeConfig{Scoring: ScoringConfig{TieEpsilon: Float(-0.1)}}, wantErr: "tieEpsilon"},
		{name: "negative index", cfg: ServeConfig{Index: IndexConfig{MaxBytes: -1}}, wantErr: "index:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate = %v, want it to mention %q", err, tt.wantErr)
			}
		})
	}
}

func TestScoringMergeAndDefaults(t *testing.T) {
	global := ScoringConfig{LoadWeight: Float(2), HerdMargin: Float(8)}
	got := global.Merge(&ScoringConfig{LoadWeight: Float(0)}).WithDefaults()
	if *got.LoadWeight != 0 || *got.HerdMargin != 8 || *got.PrefixWeight != DefaultPrefixWeight || *got.TieEpsilon != DefaultTieEpsilon {
		t.Fatalf("merged = load %v herd %v prefix %v eps %v", *got.LoadWeight, *got.HerdMargin, *got.PrefixWeight, *got.TieEpsilon)
	}
	if same := global.Merge(nil); same.LoadWeight != global.LoadWeight {
		t.Fatal("Merge(nil) changed the config")
	}
}

func TestRoutingJSON(t *testing.T) {
	// Config files are YAML, read through their JSON form (sigs.k8s.io/yaml),
	// so the JSON tags are what this checks.
	doc := `{
  "index": {"blockSize": 16, "maxBytes": 1048576, "grace": "5s"},
  "scoring": {"loadWeight": 0.25},
  "pools": [{"name": "llama", "endpoints": ["10.0.0.1:8000"],
    "tokenizer": {"dir": "/models/llama", "mode": "drift", "driftSampleRate": 0.1},
    "loraAdapters": ["sql-lora"], "scoring": {"prefixWeight": 2}}]
}`
	var cfg ServeConfig
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	p := cfg.Pools[0]
	if p.Tokenizer.Mode != TokenizerDrift || p.LoRAAdapters[0] != "sql-lora" || *p.Scoring.PrefixWeight != 2 || *cfg.Scoring.LoadWeight != 0.25 || cfg.Index.Grace.D().Seconds() != 5 {
		t.Fatalf("decoded %+v", cfg)
	}
	if d := cfg.WithDefaults().Index; d.SweepInterval.D() != DefaultIndexSweepInterval || d.BlockSize != 16 {
		t.Fatalf("index defaults %+v", d)
	}
}
