package router

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

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
}

// pipelineHooks are the parts other subsystems supply: the TTL controller and
// the engines' load gauges from relay heartbeats. Nil fields mean the static
// TTL and no engine gauges.
type pipelineHooks struct {
	ttl      scorer.TTLPolicy
	engine   scorer.EngineLoad
	liveness scorer.Liveness
	observer index.Observer
	// predictions shares committed predictions with other replicas; nil
	// keeps them local.
	predictions scorer.PredictionSink
	// affinity maps stored Responses ids to endpoints; nil routes
	// previous_response_id requests on load.
	affinity scorer.Affinity
}

// newPipeline builds the pipeline from cfg (defaults applied) and registers
// its metrics on reg. Pools without a tokenizer route on load alone.
func newPipeline(cfg Config, reg prometheus.Registerer, hooks pipelineHooks) (*pipeline, error) {
	ixMetrics, err := index.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	opts := cfg.Index.Options()
	opts.Observer, opts.Metrics = hooks.observer, ixMetrics
	ix, err := index.New(opts)
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
		TTL: hooks.ttl, EngineLoad: hooks.engine, Liveness: hooks.liveness, Metrics: metrics, Predictions: hooks.predictions,
		LearnMaxModelLen: true,
		Affinity:         hooks.affinity,
	})
	return &pipeline{index: ix, pools: pools, load: load, scorer: s}, nil
}

// run owns the pipeline's background goroutines until ctx ends.
func (p *pipeline) run(ctx context.Context) error {
	return p.scorer.Run(ctx, 0) // 0: scorer.DefaultSweepInterval
}
