package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Request is the engine's view of one generation request, independent of the
// HTTP API it arrived through. It is a plain value; the zero value has no
// prompt and is rejected by Submit.
type Request struct {
	// Model is the served model name; it seeds the generated text.
	Model string
	// Prompt is tokenized when Tokens is nil.
	Prompt string
	// Tokens are prompt token ids given by the client.
	Tokens []int
	// MaxTokens bounds the generated tokens; zero means Options.DefaultMaxTokens.
	MaxTokens int
}

// Token is one generated token; a plain value.
type Token struct {
	ID   int
	Text string
}

// Usage counts a sequence's tokens as OpenAI's usage object reports them.
// It is a plain value; the zero value means nothing was processed.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	// CachedTokens is the part of the prompt served from the prefix cache.
	CachedTokens int
}

// TotalTokens is prompt plus completion tokens.
func (u Usage) TotalTokens() int { return u.PromptTokens + u.CompletionTokens }

// costModel is what running a request costs in wall-clock time.
type costModel struct {
	ttft, prefillPerToken, decodePerToken time.Duration
}

// prefill is the time from admission to the first token for a prompt of n
// tokens of which cached were already in the prefix cache.
func (c costModel) prefill(n, cached int) time.Duration {
	return c.ttft + time.Duration(n-cached)*c.prefillPerToken
}

// Engine runs requests like a model server: each waits for one of
// MaxRunning slots, pays the prefill cost, then decodes token by token.
// Create it with NewEngine (the zero value is not usable); it is safe for
// concurrent use.
type Engine struct {
	tokenizer        Tokenizer
	cost             costModel
	maxModelLen      int
	defaultMaxTokens int
	slots            chan struct{} // a buffered slot is a running request
	metrics          *engineMetrics
}

// NewEngine returns an engine configured by opts (defaults applied) whose
// gauges and counters are registered on reg.
func NewEngine(opts Options, reg prometheus.Registerer) (*Engine, error) {
	opts = opts.WithDefaults()
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("validating engine options: %w", err)
	}
	m, err := newEngineMetrics(reg)
	if err != nil {
		return nil, err
	}
	return &Engine{
		tokenizer:        opts.Tokenizer,
		cost:             costModel{opts.TTFT, opts.PrefillPerToken, opts.DecodePerToken},
		maxModelLen:      opts.MaxModelLen,
		defaultMaxTokens: opts.DefaultMaxTokens,
		slots:            make(chan struct{}, opts.MaxRunning),
		metrics:          m,
	}, nil
}

// Submit tokenizes req, waits for a running slot and pays the prefill cost.
// It returns a Sequence ready to decode, which the caller must Close. When ctx
// ends first, Submit gives up its place and returns ctx's error.
func (e *Engine) Submit(ctx context.Context, req Request) (*Sequence, error) {
	seq, err := e.newSequence(req)
	if err != nil {
		return nil, err
	}
	if err := e.admit(ctx); err != nil {
		return nil, fmt.Errorf("waiting for a running slot: %w", err)
	}
	seq.engine = e
	if err := e.prefill(ctx, seq); err != nil {
		seq.Close()
		return nil, err
	}
	return seq, nil
}

func (e *Engine) newSequence(req Request) (*Sequence, error) {
	prompt := req.Tokens
	if prompt == nil {
		prompt = e.tokenizer.Encode(req.Prompt)
	}
	if len(prompt) == 0 {
		return nil, ErrEmptyPrompt
	}
	maxTokens := req.MaxTokens
	if maxTokens == 0 {
		maxTokens = e.defaultMaxTokens
	}
	if maxTokens < 0 {
		return nil, ErrBadMaxTokens
	}
	if len(prompt)+maxTokens > e.maxModelLen {
		return nil, fmt.Errorf("%w: %d prompt + %d max_tokens > %d",
			ErrPromptTooLong, len(prompt), maxTokens, e.maxModelLen)
	}
	return &Sequence{prompt: prompt, maxTokens: maxTokens, gen: newGenerator(req.Model, prompt)}, nil
}

// admit takes a running slot, counting the request as waiting while it
// cannot.
func (e *Engine) admit(ctx context.Context) error {
	select {
	case e.slots <- struct{}{}:
		e.metrics.running.Inc()
		return nil
	default:
	}
	e.metrics.waiting.Inc()
	defer e.metrics.waiting.Dec()
	select {
	case e.slots <- struct{}{}:
		e.metrics.running.Inc()
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (e *Engine) release() {
	<-e.slots
	e.metrics.running.Dec()
}

// prefill computes the prompt's KV state. There is no prefix cache yet, so
// every prompt token is computed and none is reported cached.
func (e *Engine) prefill(ctx context.Context, seq *Sequence) error {
	seq.cached = 0
	if err := sleep(ctx, e.cost.prefill(len(seq.prompt), seq.cached)); err != nil {
		return fmt.Errorf("prefilling: %w", err)
	}
	e.metrics.promptTokens.Add(float64(len(seq.prompt)))
	return nil
}

// sleep waits d or until ctx ends, whichever is first.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
