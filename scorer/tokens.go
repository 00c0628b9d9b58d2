package scorer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"time"

	"github.com/warmroute/warmroute/tokenizer"
)

// Tokens turns a request's prompt into the token ids its engine will see.
// endpoints are the pool's candidates, for implementations that ask an engine.
// Implementations are safe for concurrent use.
type Tokens interface {
	Tokens(ctx context.Context, req *Request, endpoints []string) ([]uint32, error)
}

// TokenAppender is a Tokens that appends the ids to a caller's buffer, so
// that a Scorer reuses one buffer per concurrent decision instead of
// allocating the prompt's ids on every request. The Scorer reads the ids only
// until it has keyed them; implementations must not retain dst.
type TokenAppender interface {
	Tokens
	AppendTokens(ctx context.Context, req *Request, endpoints []string, dst []uint32) ([]uint32, error)
}

// chatRequest is the template's view of a chat request. The generation prompt
// is on unless the request turned it off, as the OpenAI servers default.
func chatRequest(req *Request) (tokenizer.ChatRequest, error) {
	msgs := make([]json.RawMessage, len(req.Messages))
	for i, m := range req.Messages {
		if len(m.Raw) == 0 {
			return tokenizer.ChatRequest{}, fmt.Errorf("message %d: %w", i, ErrNoRawMessage)
		}
		msgs[i] = m.Raw
	}
	raw, err := json.Marshal(msgs)
	if err != nil {
		return tokenizer.ChatRequest{}, fmt.Errorf("encoding messages: %w", err)
	}
	return tokenizer.ChatRequest{
		Messages:             raw,
		Tools:                req.Tools,
		Kwargs:               req.ChatTemplateKwargs,
		AddGenerationPrompt:  !req.NoGenerationPrompt,
		AddSpecialTokens:     req.AddSpecialTokens(),
		ReasoningEffort:      req.ReasoningEffort,
		Documents:            req.Documents,
		ContinueFinalMessage: req.ContinueFinalMessage,
		GenerationPromptSent: req.GenerationPromptSent,
		Template:             req.ChatTemplate,
		ToolChoice:           req.ToolChoice,
	}, nil
}

// firstPrompt returns the completion prompt routing keys on: a batch of
// prompts is routed by its first, which is the one the engine schedules first.
func firstPrompt(req *Request) (text string, ids []int, ok bool) {
	switch {
	case len(req.PromptTokenIDs) > 0:
		return "", req.PromptTokenIDs[0], true
	case len(req.Prompts) > 0:
		return req.Prompts[0], nil, true
	}
	return "", nil, false
}

// tokenIDs converts caller-given ids, rejecting ones no vocabulary has.
func tokenIDs(ids []int) ([]uint32, error) { return appendTokenIDs(nil, ids) }

// appendTokenIDs is tokenIDs appending to dst.
func appendTokenIDs(dst []uint32, ids []int) ([]uint32, error) {
	dst = slices.Grow(dst, len(ids))
	for i, id := range ids {
		if id < 0 || id > 1<<32-1 {
			return dst, fmt.Errorf("prompt token %d is %d: %w", i, id, ErrBadTokenID)
		}
		dst = append(dst, uint32(id))
	}
	return dst, nil
}

// LocalTokens encodes in process: chat through the template and a prefix
// cache (turn N+1 re-uses turn N's ids), completions with special tokens
// unless the request turns them off (Request.AddSpecialTokens).
// Safe for concurrent use; build it with NewLocalTokens.
type LocalTokens struct {
	tk      *tokenizer.Tokenizer
	chat    *tokenizer.ChatTemplate // nil: the model has no chat template
	harmony *tokenizer.HarmonyChat  // set for a Harmony vocabulary (GPT-OSS)
	prefix  *tokenizer.PrefixCache
	engine  tokenizer.Engine
}

// LocalOption configures NewLocalTokens.
type LocalOption func(*localOptions)

type localOptions struct {
	harmonyDate func() string
	engine      tokenizer.Engine
}

// WithEngine makes the tokens mirror engine e's request preprocessing (vLLM
// by default). For SGLang a completion always gets the tokenizer's special
// tokens (SGLang has no add_special_tokens for completions) and chat renders
// as SGLang renders it (tokenizer.EngineSGLang), GPT-OSS included: SGLang
// uses the model's Jinja template there, not Harmony.
func WithEngine(e tokenizer.Engine) LocalOption {
	return func(o *localOptions) { o.engine = e }
}

// WithHarmonyDate sets the start date a Harmony (GPT-OSS) prompt carries, as
// YYYY-MM-DD; the default is today in UTC (the engine's date when it runs in
// UTC; vLLM's VLLM_SYSTEM_START_DATE pins it).
func WithHarmonyDate(date func() string) LocalOption {
	return func(o *localOptions) { o.harmonyDate = date }
}

// DefaultPrefixCacheBytes bounds each pool's chat prefix cache.
const DefaultPrefixCacheBytes = 64 << 20

// NewLocalTokens wraps a loaded tokenizer. A model without a chat template
// still routes completions; its chat requests fail with ErrNoChatTemplate.
// A Harmony vocabulary (GPT-OSS) renders chat in the Harmony format, as vLLM
// does, instead of with a template.
func NewLocalTokens(tk *tokenizer.Tokenizer, opts ...LocalOption) *LocalTokens {
	o := localOptions{harmonyDate: tokenizer.UTCDate}
	for _, opt := range opts {
		opt(&o)
	}
	l := &LocalTokens{tk: tk, prefix: tokenizer.NewPrefixCache(tk, DefaultPrefixCacheBytes), engine: o.engine}
	switch {
	case o.engine == tokenizer.EngineSGLang:
		l.chat, _ = tk.ChatTemplate(tokenizer.WithEngine(o.engine)) // absent template: chat requests report it
	case tk.Harmony():
		l.harmony = tokenizer.NewHarmonyChat(o.harmonyDate)
	default:
		l.chat, _ = tk.ChatTemplate() // absent template: chat requests report it
	}
	return l
}

// Tokens implements Tokens.
func (l *LocalTokens) Tokens(ctx context.Context, req *Request, endpoints []string) ([]uint32, error) {
	return l.AppendTokens(ctx, req, endpoints, nil)
}

// AppendTokens implements TokenAppender.
func (l *LocalTokens) AppendTokens(_ context.Context, req *Request, _ []string, dst []uint32) ([]uint32, error) {
	if req.Kind == KindChat {
		return l.chatTokens(req, dst)
	}
	text, ids, ok := firstPrompt(req)
	switch {
	case !ok:
		return dst, nil
	case ids != nil:
		return appendTokenIDs(dst, ids)
	}
	if l.engine == tokenizer.EngineSGLang {
		return tooLong(l.tk.AppendEncodeSGLang(dst, text))
	}
	return tooLong(l.tk.AppendEncode(dst, text, req.AddSpecialTokens()))
}

// tooLong makes the tokenizer's refusal of text with too many bytes in long
// words an ErrPromptTooLong: the request is routed on load, as an
// over-long prompt is.
func tooLong(ids []uint32, err error) ([]uint32, error) {
	if errors.Is(err, tokenizer.ErrLongWords) {
		return nil, fmt.Errorf("%w: %w", ErrPromptTooLong, err)
	}
	return ids, err
}

func (l *LocalTokens) chatTokens(req *Request, dst []uint32) ([]uint32, error) {
	if l.chat == nil && l.harmony == nil {
		return nil, ErrNoChatTemplate
	}
	if l.chat != nil {
		req = forTemplate(req, l.chat)
	}
	cr, err := chatRequest(req)
	if err != nil {
		return nil, err
	}
	if l.harmony != nil {
		// vLLM encodes a Harmony prompt without the tokenizer's special
		// tokens whatever add_special_tokens says.
		p, err := l.harmonyPrompt(req, cr)
		if err != nil {
			return nil, err
		}
		return tooLong(l.tk.AppendHarmony(dst, p))
	}
	if l.engine == tokenizer.EngineSGLang {
		if err := l.tk.SGLangCompatible(); err != nil {
			return nil, err
		}
	}
	p, err := l.chat.RenderPrompt(cr)
	if err != nil {
		return nil, err
	}
	start := len(dst)
	if dst, err = l.prefix.AppendEncode(dst, p.Text, p.AddSpecialTokens); err == nil && p.MediaCut {
		dst = l.tk.TrimToAdded(dst, start) // a request with media routes on the prefix before it
	}
	if err != nil || !p.HasContinue {
		return tooLong(dst, err)
	}
	return tooLong(l.tk.AppendContinuation(dst, p.Continue))
}

// forTemplate applies what vLLM's /v1/messages decides by probing the chat
// template: inline system messages merged for a system-first template, and
// the effort disabled thinking maps to. req is not modified.
func forTemplate(req *Request, chat *tokenizer.ChatTemplate) *Request {
	merge := req.SystemFirstMessages != nil && chat.SystemFirst()
	low := req.DisabledThinking && chat.DisabledThinkingEffort() != "none"
	if !merge && !low {
		return req
	}
	r := *req
	if merge {
		r.Messages = req.SystemFirstMessages
	}
	if low {
		r.ReasoningEffort = chat.DisabledThinkingEffort()
	}
	return &r
}

// harmonyPrompt renders a Responses request through vLLM's Harmony
// Responses path, other chat through its Harmony chat path.
func (l *LocalTokens) harmonyPrompt(req *Request, cr tokenizer.ChatRequest) (*tokenizer.HarmonyPrompt, error) {
	if req.HarmonyResponses != nil {
		return l.harmony.RenderResponses(*req.HarmonyResponses)
	}
	if req.Path == "/v1/messages" && cr.ReasoningEffort == "none" {
		// vLLM probes its renderer for the effort a disabled Anthropic
		// thinking becomes; Harmony refuses "none", so it is "low".
		cr.ReasoningEffort = "low"
	}
	return l.harmony.Render(cr)
}

// RemoteTokens asks one of the pool's engines (POST /tokenize), chosen at
// random so no engine carries all tokenization. Safe for concurrent use.
type RemoteTokens struct {
	client  *http.Client
	timeout time.Duration
}

// NewRemoteTokens bounds each call by timeout.
func NewRemoteTokens(client *http.Client, timeout time.Duration) *RemoteTokens {
	return &RemoteTokens{client: client, timeout: timeout}
}

// Tokens implements Tokens.
func (r *RemoteTokens) Tokens(ctx context.Context, req *Request, endpoints []string) ([]uint32, error) {
	if len(endpoints) == 0 {
		return nil, ErrNoEndpoint
	}
	remote := tokenizer.NewRemote("http://"+endpoints[rand.IntN(len(endpoints))], r.client)
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	if req.Kind == KindChat {
		cr, err := chatRequest(req)
		if err != nil {
			return nil, err
		}
		return remote.TokenizeChat(ctx, cr)
	}
	text, ids, ok := firstPrompt(req)
	switch {
	case !ok:
		return nil, nil
	case ids != nil:
		return tokenIDs(ids)
	}
	return remote.Tokenize(ctx, text, req.AddSpecialTokens())
}
