package main

import (
	"io"
	"strings"
	"testing"

	"github.com/warmroute/warmroute/router"
	"github.com/warmroute/warmroute/scorer"
)

func TestPipelineFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		check   func(t *testing.T, c router.Config)
		wantErr string
	}{
		{name: "defaults", args: []string{"--endpoints", "m=10.0.0.1:8000"}, check: func(t *testing.T, c router.Config) {
			if c.Index.BlockSize != 16 || c.Pools[0].Tokenizer.Enabled() || *c.Scoring.LoadWeight != scorer.DefaultLoadWeight {
				t.Fatalf("config %+v", c)
			}
		}},
		{name: "tokenizer after endpoints", args: []string{"--tokenizer", "m=/tok", "--tokenizer-mode", "drift", "--endpoints", "m=10.0.0.1:8000"}, check: func(t *testing.T, c router.Config) {
			if tc := c.Pools[0].Tokenizer; tc.Dir != "/tok" || tc.Mode != scorer.TokenizerDrift {
				t.Fatalf("tokenizer %+v", tc)
			}
		}},
		{name: "scoring and index", args: []string{"--endpoints", "m=10.0.0.1:8000", "--load-weight", "0", "--herd-margin", "2", "--block-size", "32", "--index-grace", "3s"}, check: func(t *testing.T, c router.Config) {
			if *c.Scoring.LoadWeight != 0 || *c.Scoring.HerdMargin != 2 || c.Index.BlockSize != 32 || c.Index.Grace.D().Seconds() != 3 {
				t.Fatalf("config %+v", c)
			}
		}},
		{name: "tokenizer for unknown pool", args: []string{"--endpoints", "m=10.0.0.1:8000", "--tokenizer", "x=/tok"}, wantErr: "no such pool"},
		{name: "malformed tokenizer flag", args: []string{"--tokenizer", "m"}, wantErr: "want POOL=DIR"},
		{name: "bad mode", args: []string{"--endpoints", "m=10.0.0.1:8000", "--tokenizer", "m=/t", "--tokenizer-mode", "psychic"}, wantErr: "want local, remote or drift"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := parseServeConfig(tt.args, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, cfg)
		})
	}
}
