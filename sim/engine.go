package sim

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"
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
	// Chat, when set, is the chat request Prompt was flattened from; a real
	// tokenizer renders it with the model's chat template instead.
	Chat *ChatPrompt
	// AddSpecialTokens is the request's add_special_tokens; nil takes vLLM's
	// default, on for completions and off for chat (the template writes
	// them).
	AddSpecialTokens *bool
	// MaxTokens bounds the generated tokens; zero means Options.DefaultMaxTokens.
	MaxTokens int
	// LoRA names the adapter the request runs under; empty for the base model.
	LoRA string
	// CacheSalt isolates this request's cached blocks from other tenants'.
	CacheSalt string
	// FailPrefill makes prefill fail after admission, storing no block.
	FailPrefill bool
	// SilentStore makes the request answer normally but store (and
	// publish) no block.
	SilentStore bool
	// Prefilled means a remote prefiller computed the prompt (pd.go): the
	// engine neither looks it up in its cache nor stores it, pays only the
	// TTFT, and reports PrefilledCached, the prefiller's cached tokens.
	Prefilled       bool
	PrefilledCached int
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

// step is the time one prefill step of n uncached tokens takes; the first
// step of a request also pays the TTFT.
func (c costModel) step(n int, first bool) time.Duration {
	d := time.Duration(n) * c.prefillPerToken
	if first {
		d += c.ttft
	}
	return d
}

// Engine runs requests like a model server: each waits for one of
// MaxRunning slots, looks its prompt up in the prefix cache, pays the
// prefill cost of the uncached tokens, then decodes token by token.
// Create it with NewEngine (the zero value is not usable) and Close it; it
// is safe for concurrent use.
type Engine struct {
	encoder          promptEncoder
	cost             costModel
	maxModelLen      int
	defaultMaxTokens int
	prefillChunk     int
	slots            chan struct{} // a buffered slot is a running request
	metrics          *engineMetrics
	cache            *kvCache
	events           *eventEndpoints // nil when KV events are off
	pub              *publisher      // nil when KV events are off
	silent           *silentStores   // nil without silent failures
	closeOnce        sync.Once
}

// NewEngine returns an engine configured by opts (defaults applied) that
// records into m, from NewMetrics (nil records into collectors registered
// nowhere). With a KV events endpoint it binds its ZMQ sockets and starts
// publishing; Close releases them.
func NewEngine(opts Options, metrics *Metrics) (*Engine, error) {
	opts = opts.WithDefaults()
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("validating engine options: %w", err)
	}
	if metrics == nil {
		metrics, _ = NewMetrics(nil) // registers nothing, so cannot fail
	}
	m := metrics.engine
	m.cacheConfig.WithLabelValues(strconv.Itoa(opts.BlockSize), strconv.Itoa(opts.NumBlocks), "True").Set(1)
	e := &Engine{
		encoder:          standInEncoder{opts.Tokenizer},
		cost:             costModel{opts.TTFT, opts.PrefillPerToken, opts.DecodePerToken},
		maxModelLen:      opts.MaxModelLen,
		defaultMaxTokens: opts.DefaultMaxTokens,
		prefillChunk:     opts.PrefillChunk,
		slots:            make(chan struct{}, opts.MaxRunning),
		metrics:          m,
		silent:           newSilentStores(opts.SilentStoreRate, opts.FaultSeed),
	}
	if opts.TokenizerDir != "" {
		var err error
		if e.encoder, err = loadHFEncoder(opts.TokenizerDir); err != nil {
			return nil, err
		}
	}
	if err := e.startEvents(opts, metrics.events); err != nil {
		return nil, err
	}
	e.cache = newKVCache(opts, e.pub, m)
	return e, nil
}

// Close stops publishing KV events and closes the event sockets. Requests
// still running finish normally. It is safe to call more than once.
func (e *Engine) Close() {
	e.closeOnce.Do(func() {
		if e.events != nil {
			e.events.close()
		}
	})
}

// Submit tokenizes req, waits for a running slot and prefills. It returns a
// Sequence ready to decode, which the caller must Close. When ctx ends
// first, Submit gives up its place and returns ctx's error.
func (e *Engine) Submit(ctx context.Context, req Request) (*Sequence, error) {
	seq, err := e.newSequence(req)
	if err != nil {
		return nil, err
	}
	if err := e.admit(ctx); err != nil {
		return nil, fmt.Errorf("waiting for a running slot: %w", err)
	}
	seq.engine = e
	if err := e.prefill(ctx, seq, req); err != nil {
		seq.Close()
		return nil, err
	}
	return seq, nil
}

// Tokenize returns req's prompt ids as Submit would compute them, with
// vLLM's add_special_tokens.
func (e *Engine) Tokenize(req Request, addSpecial bool) ([]int, error) {
	if req.Tokens != nil {
		return req.Tokens, nil
	}
	return e.encoder.encode(req, addSpecial)
}

func (e *Engine) newSequence(req Request) (*Sequence, error) {
	addSpecial := req.Chat == nil
	if req.AddSpecialTokens != nil {
		addSpecial = *req.AddSpecialTokens
	}
	prompt, err := e.Tokenize(req, addSpecial)
	if err != nil {
		return nil, err
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

// prefill looks the prompt up in the prefix cache and computes the rest in
// steps of prefillChunk tokens (one step when 0). Each step first stores the
// blocks it fills (one event batch), then pays its cost; the first step also
// pays the TTFT.
func (e *Engine) prefill(ctx context.Context, seq *Sequence, req Request) error {
	if req.FailPrefill {
		return fmt.Errorf("prefilling: %w (requested by %s)", ErrPrefillFailed, failPrefillHeader)
	}
	if req.Prefilled {
		seq.cached = min(max(req.PrefilledCached, 0), len(seq.prompt))
		e.metrics.promptTokens.Add(float64(len(seq.prompt)))
		return sleep(ctx, e.cost.ttft)
	}
	seq.blocks = e.cache.begin(seq.prompt, blockExtra{lora: req.LoRA, salt: req.CacheSalt})
	seq.cached = seq.blocks.cached
	silent := req.SilentStore || e.silent.draw()
	done := seq.cached
	for step := 0; done < len(seq.prompt); step++ {
		end := len(seq.prompt)
		if e.prefillChunk > 0 {
			end = min(end, done+e.prefillChunk)
		}
		if !silent {
			e.cache.store(seq.blocks, seq.prompt, end)
		}
		if err := sleep(ctx, e.cost.step(end-done, step == 0)); err != nil {
			return fmt.Errorf("prefilling: %w", err)
		}
		done = end
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
