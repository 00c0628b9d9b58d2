package router

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/scorer"
)

func TestNewPipeline(t *testing.T) {
	tests := []struct {
		name    string
		pools   []scorer.PoolConfig
		wantErr string
	}{
		{name: "load only", pools: []scorer.PoolConfig{{Name: "m", Endpoints: []string{"10.0.0.1:8000"}}}},
		{name: "remote tokenizer", pools: []scorer.PoolConfig{{Name: "m", Tokenizer: scorer.TokenizerConfig{Mode: scorer.TokenizerRemote}}}},
		{name: "missing tokenizer dir", pools: []scorer.PoolConfig{{Name: "m", Tokenizer: scorer.TokenizerConfig{Dir: t.TempDir()}}}, wantErr: `pool "m"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Pools: tt.pools}.WithDefaults()
			p, err := newPipeline(cfg, prometheus.NewRegistry(), pipelineHooks{})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || p.index == nil || p.scorer == nil {
				t.Fatalf("newPipeline = %+v, %v", p, err)
			}
		})
	}
}
