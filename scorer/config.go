package scorer

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/tokenizer"
)

// Config is the routing part of the router's configuration file: the pools,
// which pool takes unknown models, fallbacks and the scoring weights. It is
// composed into the file schema at the top level (pools, defaultPool,
// fallbacks) and under `scoring`.
type Config struct {
	// Pools maps model names to endpoints.
	Pools []PoolConfig `json:"pools,omitempty"`
	// DefaultPool names the pool used for unknown models (otherwise 404) and
	// for requests without a model (header-only requests, unknown paths).
	// When empty and there is exactly one pool, that pool is the default for
	// requests without a model, but unknown models still get 404.
	DefaultPool string `json:"defaultPool,omitempty"`
	// Fallbacks is how many additional endpoints, in preference order,
	// follow the chosen one in the destination header. Default 0.
	Fallbacks int `json:"fallbacks,omitempty"`
	// Scoring weighs the scorers.
	Scoring ScoringConfig `json:"scoring,omitempty"`
}

// PoolConfig is one model pool: the model names it serves and its endpoints.
type PoolConfig struct {
	// Name identifies the pool; it is also accepted as a model name.
	Name string `json:"name"`
	// Models lists the model names and aliases routed to this pool.
	Models []string `json:"models,omitempty"`
	// Endpoints lists static endpoints as "ip:port". In the file an entry
	// may instead be {address: "ip:port", role: prefill|decode|both}, which
	// also fills Roles (roles.go).
	Endpoints []string `json:"endpoints,omitempty"`
	// Roles gives endpoints of Endpoints a prefill/decode role; endpoints
	// it omits serve both. A pool with a prefill-only endpoint is a P/D pool
	// (pd.go). In the file it is written inside the endpoints entries.
	Roles map[string]Role `json:"-"`
	// Tokenizer enables prefix-aware routing for the pool; without it the
	// pool routes on load alone. Every pool keys its blocks at the index's
	// block size.
	Tokenizer TokenizerConfig `json:"tokenizer,omitempty"`
	// LoRAAdapters names the adapters the pool serves. A request whose model
	// names one is keyed under the adapter, as the engine tags its blocks.
	LoRAAdapters []string `json:"loraAdapters,omitempty"`
	// MaxModelLen is the engines' max_model_len: a prompt with more tokens
	// is routed on load (the engine answers it with its own 400), and the
	// prompt text tokenized per request is bounded by 8 bytes per token.
	// Zero means not known: the text is bounded by DefaultMaxTokenizeBytes.
	MaxModelLen int `json:"maxModelLen,omitempty"`
	// Engine is the pool's serving engine, "vllm" (default) or "sglang":
	// the engines read different request fields and normalise chat
	// messages differently before their templates see them, so the pool's
	// prompts are tokenized as that engine does (tokenizer.Engine).
	Engine string `json:"engine,omitempty"`
	// InferencePool takes the pool's endpoints from Kubernetes: the ready
	// Pods that this Gateway API Inference Extension InferencePool
	// ("name", or "namespace/name"; the router's own namespace by default)
	// selects, on its target port. Not with Endpoints.
	InferencePool string `json:"inferencePool,omitempty"`
}

// Tokenizer modes of TokenizerConfig.Mode.
const (
	// TokenizerLocal encodes in process from the pool's tokenizer files.
	TokenizerLocal = "local"
	// TokenizerRemote asks one of the pool's engines (POST /tokenize).
	TokenizerRemote = "remote"
	// TokenizerDrift encodes locally and compares a sample of requests with
	// the engine's /tokenize, off the request path.
	TokenizerDrift = "drift"
)

// Fixed tokenizer parameters. A drift check is a sample, not a gate, and a
// remote /tokenize slower than half a second costs more than the cache hit
// it could find, so neither is a setting.
const (
	driftSampleRate = 0.01
	remoteTimeout   = 500 * time.Millisecond
)

// TokenizerConfig says how a pool turns prompts into token ids. A pool
// without one routes on load alone.
type TokenizerConfig struct {
	// Dir holds the model's tokenizer.json and tokenizer_config.json.
	// Required for local and drift modes.
	Dir string `json:"dir,omitempty"`
	// Mode is local (default), remote or drift.
	Mode string `json:"mode,omitempty"`
}

// Enabled reports whether the pool routes on prefixes.
func (c TokenizerConfig) Enabled() bool { return c.Dir != "" || c.Mode == TokenizerRemote }

// WithDefaults returns a copy of c with every zero field set to its default.
func (c TokenizerConfig) WithDefaults() TokenizerConfig {
	if c.Mode == "" {
		c.Mode = TokenizerLocal
	}
	return c
}

func (c TokenizerConfig) validate() error {
	switch c.Mode {
	case "", TokenizerLocal, TokenizerDrift:
		if c.Dir == "" && c.Mode != "" {
			return fmt.Errorf("tokenizer mode %q needs dir", c.Mode)
		}
	case TokenizerRemote:
	default:
		return fmt.Errorf("tokenizer mode %q: want local, remote or drift", c.Mode)
	}
	return nil
}

// ScoringConfig weighs the scorers and tunes anti-herding. Fields are
// pointers so that an explicit 0 differs from "unset" (nil means the
// default); see WithDefaults.
type ScoringConfig struct {
	// PrefixWeight weighs the cached-prefix score. Default 1.
	PrefixWeight *float64 `json:"prefixWeight,omitempty"`
	// LoadWeight weighs router-tracked load (in-flight requests and queued
	// prefill tokens). Default 0.5.
	LoadWeight *float64 `json:"loadWeight,omitempty"`
	// EngineLoadWeight weighs the engines' own gauges (queue, KV usage) when
	// relays report them. Default 0.3.
	EngineLoadWeight *float64 `json:"engineLoadWeight,omitempty"`
	// HerdMargin is how many more in-flight requests than the least-loaded
	// candidate an endpoint may carry before its prefix score is discounted;
	// at twice the margin the prefix no longer counts. Default 4.
	HerdMargin *float64 `json:"herdMargin,omitempty"`
	// TieEpsilon makes candidates within this much of the best score
	// equivalent; one of them is chosen at random. Default 0.02.
	TieEpsilon *float64 `json:"tieEpsilon,omitempty"`
	// ShedWaiting sheds load: a request whose every candidate's engine
	// reports at least this many waiting (queued, not yet running) requests
	// is refused with 429 instead of joining a queue. A candidate without
	// fresh gauges is never saturated. Zero (the default) never sheds.
	ShedWaiting float64 `json:"shedWaiting,omitempty"`
}

// Defaults of ScoringConfig.
const (
	DefaultPrefixWeight     = 1.0
	DefaultLoadWeight       = 0.5
	DefaultEngineLoadWeight = 0.3
	DefaultHerdMargin       = 4.0
	DefaultTieEpsilon       = 0.02
)

// WithDefaults returns a copy of c with every unset field set to its default.
func (c ScoringConfig) WithDefaults() ScoringConfig {
	set := func(p **float64, def float64) {
		if *p == nil {
			*p = Float(def)
		}
	}
	set(&c.PrefixWeight, DefaultPrefixWeight)
	set(&c.LoadWeight, DefaultLoadWeight)
	set(&c.EngineLoadWeight, DefaultEngineLoadWeight)
	set(&c.HerdMargin, DefaultHerdMargin)
	set(&c.TieEpsilon, DefaultTieEpsilon)
	return c
}

// Float returns a pointer to v, for ScoringConfig literals.
func Float(v float64) *float64 { return &v }

func (c ScoringConfig) validate() []error {
	var errs []error
	check := func(name string, v *float64) {
		if v != nil && (*v < 0 || *v != *v) {
			errs = append(errs, fmt.Errorf("scoring.%s must be a non-negative number, got %g", name, *v))
		}
	}
	check("prefixWeight", c.PrefixWeight)
	check("loadWeight", c.LoadWeight)
	check("engineLoadWeight", c.EngineLoadWeight)
	check("herdMargin", c.HerdMargin)
	check("tieEpsilon", c.TieEpsilon)
	check("shedWaiting", &c.ShedWaiting)
	return errs
}

// Validate reports every problem in c, joined, or nil.
func (c Config) Validate() error {
	var errs []error
	if c.Fallbacks < 0 {
		errs = append(errs, fmt.Errorf("fallbacks must not be negative, got %d", c.Fallbacks))
	}
	errs = append(errs, validatePools(c.Pools, c.DefaultPool)...)
	errs = append(errs, c.Scoring.validate()...)
	return errors.Join(errs...)
}

func validatePools(pools []PoolConfig, defaultPool string) []error {
	var errs []error
	names := map[string]string{} // model name or alias -> pool
	pool := map[string]bool{}
	for i, p := range pools {
		if p.Name == "" {
			errs = append(errs, fmt.Errorf("pools[%d]: name is required", i))
			continue
		}
		if pool[p.Name] {
			errs = append(errs, fmt.Errorf("pools[%d]: duplicate pool name %q", i, p.Name))
		}
		pool[p.Name] = true
		for _, m := range append([]string{p.Name}, p.Models...) {
			if other, ok := names[m]; ok && other != p.Name {
				errs = append(errs, fmt.Errorf("pools[%d]: model %q is already served by pool %q", i, m, other))
			}
			names[m] = p.Name
		}
		if p.InferencePool != "" && len(p.Endpoints) > 0 {
			errs = append(errs, fmt.Errorf("pools[%d] %q: endpoints and inferencePool exclude each other: the InferencePool's pods are the members", i, p.Name))
		}
		if ns, name, ok := strings.Cut(p.InferencePool, "/"); p.InferencePool != "" && (name == "" && ok || ns == "" || strings.Contains(name, "/")) {
			errs = append(errs, fmt.Errorf("pools[%d] %q: inferencePool %q: want NAME or NAMESPACE/NAME", i, p.Name, p.InferencePool))
		}
		for _, ep := range p.Endpoints {
			if err := api.ValidateEndpoint(ep); err != nil {
				errs = append(errs, fmt.Errorf("pools[%d] %q: %w", i, p.Name, err))
			}
		}
		for _, err := range p.validateRoles() {
			errs = append(errs, fmt.Errorf("pools[%d] %q: %w", i, p.Name, err))
		}
		if p.MaxModelLen < 0 {
			errs = append(errs, fmt.Errorf("pools[%d] %q: maxModelLen must not be negative, got %d", i, p.Name, p.MaxModelLen))
		}
		if _, err := tokenizer.ParseEngine(p.Engine); err != nil {
			errs = append(errs, fmt.Errorf("pools[%d] %q: %w", i, p.Name, err))
		}
		if err := p.Tokenizer.validate(); err != nil {
			errs = append(errs, fmt.Errorf("pools[%d] %q: %w", i, p.Name, err))
		}
	}
	if defaultPool != "" && !pool[defaultPool] {
		errs = append(errs, fmt.Errorf("defaultPool %q is not a configured pool", defaultPool))
	}
	return errs
}
