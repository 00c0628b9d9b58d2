package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/scorer"
	"github.com/warmroute/warmroute/tokenizer"
)

// pipeline is the decision pipeline of `warmroute serve`: the prefix index,
// the per-pool tokenizers and the scorer over them. Its background work
// (index sweeps, tokenizer drift checks) runs in run.
type pipeline struct {
	index  *index.Index
	pools  *scorer.Pools
	load   *scorer.Load
	scorer *scorer.Scorer
	sweep  api.Duration
}

// pipelineHooks are the parts other subsystems supply: the TTL controller and
// the engines' load gauges from relay heartbeats. Nil fields mean the static
// TTL and no engine gauges.
type pipelineHooks struct {
	ttl      scorer.TTLPolicy
	engine   scorer.EngineLoad
	observer index.Observer
	// predictions shares committed predictions with other replicas; nil
	// keeps them local.
	predictions scorer.PredictionSink
}

// newPipeline builds the pipeline from cfg (defaults applied) and registers
// its metrics on reg. Pools without a tokenizer route on load alone.
func newPipeline(cfg api.ServeConfig, reg prometheus.Registerer, hooks pipelineHooks) (*pipeline, error) {
	ixMetrics, err := index.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	ix, err := index.New(index.Options{
		BlockSize: cfg.Index.BlockSize,
		MaxBytes:  cfg.Index.MaxBytes,
		Grace:     cfg.Index.Grace.D(),
		Observer:  hooks.observer,
		Metrics:   ixMetrics,
	})
	if err != nil {
		return nil, fmt.Errorf("creating index: %w", err)
	}
	tkMetrics, err := tokenizer.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	tokens, err := scorer.LoadTokens(cfg.Pools, tkMetrics)
	if err != nil {
		return nil, err
	}
	metrics, err := scorer.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	load := &scorer.Load{}
	pools := scorer.NewPools(cfg.Pools, cfg.DefaultPool)
	s := scorer.New(pools, load, scorer.Options{
		Fallbacks: cfg.Fallbacks, Index: ix, Tokens: tokens, Scoring: cfg.Scoring,
		TTL: hooks.ttl, EngineLoad: hooks.engine, Metrics: metrics, Predictions: hooks.predictions,
	})
	return &pipeline{index: ix, pools: pools, load: load, scorer: s, sweep: cfg.Index.SweepInterval}, nil
}

// run owns the pipeline's background goroutines until ctx ends.
func (p *pipeline) run(ctx context.Context) error {
	return p.scorer.Run(ctx, p.sweep.D())
}

// pipelineFlags are serve's index, scoring and tokenizer settings.
type pipelineFlags struct {
	index      api.IndexConfig
	grace      time.Duration
	scoring    struct{ prefix, load, engine, herd, epsilon float64 }
	tokenizers tokenizerFlag
	mode       string
}

// tokenizerFlag collects repeated --tokenizer POOL=DIR values.
type tokenizerFlag map[string]string

func (f *tokenizerFlag) String() string { return fmt.Sprint(map[string]string(*f)) }

func (f *tokenizerFlag) Set(v string) error {
	pool, dir, ok := strings.Cut(v, "=")
	if !ok || pool == "" || dir == "" {
		return fmt.Errorf("want POOL=DIR, got %q", v)
	}
	if *f == nil {
		*f = tokenizerFlag{}
	}
	(*f)[pool] = dir
	return nil
}

func addPipelineFlags(fs *flag.FlagSet, p *pipelineFlags) {
	fs.IntVar(&p.index.BlockSize, "block-size", 0, "engines' KV block size in tokens (default 16)")
	fs.Int64Var(&p.index.MaxBytes, "index-max-bytes", 0, "prefix index memory bound (default 1 GiB)")
	fs.DurationVar(&p.grace, "index-grace", 0, "how long expired predictions wait for a late confirmation (default 10s)")
	fs.Float64Var(&p.scoring.prefix, "prefix-weight", 0, "weight of the cached-prefix score (default 1)")
	fs.Float64Var(&p.scoring.load, "load-weight", 0, "weight of router-tracked load (default 0.5)")
	fs.Float64Var(&p.scoring.engine, "engine-load-weight", 0, "weight of engine load gauges (default 0.3)")
	fs.Float64Var(&p.scoring.herd, "herd-margin", 0, "in-flight requests above the least loaded before a prefix is discounted (default 4)")
	fs.Float64Var(&p.scoring.epsilon, "tie-epsilon", 0, "scores within this of the best are chosen among at random (default 0.02)")
	fs.Var(&p.tokenizers, "tokenizer", "POOL=DIR: tokenizer.json directory enabling prefix routing for POOL (repeatable)")
	fs.StringVar(&p.mode, "tokenizer-mode", "", "mode for --tokenizer pools: local, remote or drift (default local)")
}

// applyPipelineFlag applies one set flag; it reports false for other flags.
func applyPipelineFlag(cfg *api.ServeConfig, p *pipelineFlags, name string) bool {
	s := &cfg.Scoring
	switch name {
	case "block-size":
		cfg.Index.BlockSize = p.index.BlockSize
	case "index-max-bytes":
		cfg.Index.MaxBytes = p.index.MaxBytes
	case "index-grace":
		cfg.Index.Grace = api.Duration(p.grace)
	case "prefix-weight":
		s.PrefixWeight = api.Float(p.scoring.prefix)
	case "load-weight":
		s.LoadWeight = api.Float(p.scoring.load)
	case "engine-load-weight":
		s.EngineLoadWeight = api.Float(p.scoring.engine)
	case "herd-margin":
		s.HerdMargin = api.Float(p.scoring.herd)
	case "tie-epsilon":
		s.TieEpsilon = api.Float(p.scoring.epsilon)
	default:
		return false
	}
	return true
}

// applyTokenizerFlags runs after every other flag, so --tokenizer applies to
// the pools that --endpoints defined whatever the flags' order.
func applyTokenizerFlags(cfg *api.ServeConfig, p *pipelineFlags) error {
	for pool, dir := range p.tokenizers {
		i := slices.IndexFunc(cfg.Pools, func(pc api.PoolConfig) bool { return pc.Name == pool })
		if i < 0 {
			return fmt.Errorf("--tokenizer %s: no such pool", pool)
		}
		cfg.Pools[i].Tokenizer.Dir = dir
		if p.mode != "" {
			cfg.Pools[i].Tokenizer.Mode = p.mode
		}
	}
	return nil
}
