package tokenizer

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/ardanlabs/jinja"
)

// ChatRequest is the part of an OpenAI chat request that a chat template
// reads. Fields hold raw JSON so object key order survives into the
// template, as it does in Python.
type ChatRequest struct {
	// Messages is the JSON array of messages.
	Messages json.RawMessage
	// Tools is the JSON array of tool definitions, or empty for none.
	Tools json.RawMessage
	// Kwargs is the JSON object of chat_template_kwargs (such as
	// {"enable_thinking": false}), or empty.
	Kwargs json.RawMessage
	// AddGenerationPrompt appends the assistant turn header.
	AddGenerationPrompt bool
	// Documents is the JSON array of the request's documents (for templates
	// that support retrieval), or empty.
	Documents json.RawMessage
	// ReasoningEffort is the request's reasoning_effort, or empty. As vLLM
	// does, it reaches the template as reasoning_effort and, unless Kwargs
	// sets enable_thinking, as enable_thinking (false only for "none").
	ReasoningEffort string
	// AddSpecialTokens encodes the rendered text with the tokenizer's
	// special tokens. vLLM's default for chat is off: the template writes
	// them, and on adds them a second time.
	AddSpecialTokens bool
	// ContinueFinalMessage leaves the last message open, so the model
	// continues it (a prefilled reply): the render ends where that
	// message's text ends. It cannot be combined with AddGenerationPrompt.
	ContinueFinalMessage bool
	// GenerationPromptSent says the request itself set
	// add_generation_prompt to true; vLLM refuses that with
	// ContinueFinalMessage even where the flag has no effect (Harmony).
	GenerationPromptSent bool
	// Template is the request's chat_template: the name of one of the
	// model's named templates, or a template's source. Empty picks the
	// model's "tool_use" template for a request with tools when there is
	// one, else the default (ChatTemplates.Pick).
	Template string
	// ToolChoice is the request's tool_choice, verbatim, or empty. Only an
	// SGLang template reads it (EngineSGLang): "none" hides the tools, a
	// function choice shows that tool alone.
	ToolChoice json.RawMessage
}

// ChatTemplate renders one model's chat template the way transformers
// does. It is safe for concurrent use; the zero value is not usable.
type ChatTemplate struct {
	tmpl   *jinja.Template
	tokens map[string]string
	now    func() time.Time
	format ContentFormat
	// developer is set when the template knows the developer role; vLLM
	// turns developer messages into system ones for other templates.
	developer bool
	// named holds the model's other named templates (such as "tool_use"),
	// chosen per request (ChatRequest.Template, tools).
	named map[string]*ChatTemplate
	opts  []ChatOption
	bos   string
	eos   string
	// engine is whose preprocessing Render mirrors (WithEngine).
	engine Engine
	// src is the template's source, for the probes that read it.
	src string
	// probe runs the /v1/messages probes once (chatprobe.go).
	probe          sync.Once
	systemFirst    bool
	disabledEffort string
}

// ChatOption configures a ChatTemplate.
type ChatOption func(*ChatTemplate)

// WithClock sets the time strftime_now reports, for reproducible output.
func WithClock(now func() time.Time) ChatOption {
	return func(c *ChatTemplate) { c.now = now }
}

// WithContentFormat overrides the detected content format (vLLM's
// --chat-template-content-format).
func WithContentFormat(f ContentFormat) ChatOption {
	return func(c *ChatTemplate) { c.format = f }
}

// NewChatTemplate compiles a template. bos and eos are exposed to it as
// bos_token and eos_token (empty means absent).
func NewChatTemplate(src, bos, eos string, opts ...ChatOption) (*ChatTemplate, error) {
	t, err := jinja.Compile(src)
	if err != nil {
		return nil, fmt.Errorf("compiling chat template: %w: %w", ErrTemplate, err)
	}
	c := &ChatTemplate{tmpl: t, tokens: map[string]string{}, now: time.Now, format: DetectContentFormat(src),
		developer: supportsDeveloper(src), opts: opts, bos: bos, eos: eos, src: src}
	if bos != "" {
		c.tokens["bos_token"] = bos
	}
	if eos != "" {
		c.tokens["eos_token"] = eos
	}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// ChatTemplate compiles the default template (from chat_template.jinja,
// tokenizer_config.json or chat_template.json; see LoadDir). A Harmony
// vocabulary (GPT-OSS) has none to offer to vLLM, which does not render its
// chat with the template (see Harmony); SGLang does (WithEngine).
func (t *Tokenizer) ChatTemplate(opts ...ChatOption) (*ChatTemplate, error) {
	var probe ChatTemplate
	for _, o := range opts {
		o(&probe)
	}
	// SGLang renders GPT-OSS chat with its Jinja template.
	if t.Harmony() && probe.engine != EngineSGLang {
		return nil, fmt.Errorf("loading chat template: vLLM renders this model's chat in the Harmony format, not with its template: %w", ErrTemplate)
	}
	if t.config.ChatTemplate == "" {
		return nil, fmt.Errorf("loading chat template: none in the tokenizer files: %w", ErrTemplate)
	}
	c, err := NewChatTemplate(t.config.ChatTemplate, t.config.BOSToken, t.config.EOSToken, opts...)
	if err != nil {
		return nil, err
	}
	for name, src := range t.config.ChatTemplates {
		if name == "default" {
			continue
		}
		n, err := NewChatTemplate(src, t.config.BOSToken, t.config.EOSToken, opts...)
		if err != nil {
			return nil, fmt.Errorf("chat template %q: %w", name, err)
		}
		if c.named == nil {
			c.named = map[string]*ChatTemplate{}
		}
		c.named[name] = n
	}
	return c, nil
}

// pick is the template transformers renders a request with: the named one
// the request asks for, else the request's template source; with none asked
// for, the "tool_use" template when the request has tools and the model has
// one, else the default.
func (c *ChatTemplate) pick(req ChatRequest) (*ChatTemplate, error) {
	switch {
	case req.Template == "":
		if t, ok := c.named["tool_use"]; ok && !isNull(req.Tools) {
			return t, nil
		}
		return c, nil
	case req.Template == "default" && len(c.named) > 0:
		return c, nil
	}
	if t, ok := c.named[req.Template]; ok {
		return t, nil
	}
	return NewChatTemplate(req.Template, c.bos, c.eos, c.opts...)
}

// Render returns the prompt text for a chat request. For a request with
// media it is the render up to the content of the first message holding
// media (see mediaTag).
func (c *ChatTemplate) Render(req ChatRequest) (string, error) {
	out, _, err := c.render(req)
	return out, err
}

// render is Render, also reporting whether it cut the prompt before media.
func (c *ChatTemplate) render(req ChatRequest) (string, bool, error) {
	if req.ContinueFinalMessage && req.AddGenerationPrompt {
		return "", false, fmt.Errorf("rendering chat: continue_final_message and add_generation_prompt are both set: %w", ErrTemplate)
	}
	c, err := c.pick(req)
	if err != nil {
		return "", false, err
	}
	big := newBigInts(req.Messages, req.Tools, req.Kwargs, req.Documents)
	data, media, err := c.context(req, big)
	if err != nil {
		return "", false, err
	}
	var final string
	if req.ContinueFinalMessage {
		if final, err = tagFinalMessage(data["messages"]); err != nil {
			return "", false, err
		}
	}
	out, err := c.tmpl.RenderValues(data)
	if err != nil {
		return "", false, fmt.Errorf("%w: %w", ErrTemplate, err)
	}
	if req.ContinueFinalMessage {
		if out, err = cutAtFinalMessage(out, final); err != nil {
			return "", false, err
		}
	}
	if media {
		if out, err = cutAtMedia(out); err != nil {
			return "", false, err
		}
	}
	return big.restore(out), media, nil
}

// context builds the variables transformers passes: messages, tools,
// documents, add_generation_prompt, the special tokens, then the kwargs,
// with the request's own fields over kwargs of the same name.
// It reports whether a message holds media, whose content is then mediaTag.
func (c *ChatTemplate) context(req ChatRequest, big *bigInts) (map[string]jinja.Value, bool, error) {
	msgs, err := big.decode(req.Messages)
	if err != nil {
		return nil, false, err
	}
	if !msgs.IsList() {
		return nil, false, fmt.Errorf("decoding messages: not a list: %w", ErrMalformed)
	}
	media := firstMediaMessage(msgs)
	if err := normalizeContents(msgs, c.format); err != nil {
		return nil, false, err
	}
	rebuildMessages(msgs)
	if err := normalizeToolCalls(msgs, big); err != nil {
		return nil, false, err
	}
	if media >= 0 {
		if err := tagMediaMessage(msgs, media, c.format); err != nil {
			return nil, false, err
		}
	}
	if !c.developer {
		msgs = developerToSystem(msgs)
	}
	data := map[string]jinja.Value{
		"messages":              msgs,
		"tools":                 jinja.None(),
		"documents":             jinja.None(),
		"add_generation_prompt": jinja.NewBool(req.AddGenerationPrompt),
		"strftime_now":          jinja.NewCallable("strftime_now", c.strftime),
	}
	if !isNull(req.Tools) {
		tools, err := big.decode(req.Tools)
		if err != nil {
			return nil, false, err
		}
		if data["tools"], err = normalizeTools(tools); err != nil {
			return nil, false, err
		}
	}
	for k, v := range c.tokens {
		data[k] = jinja.NewString(v)
	}
	if err := c.addKwargs(data, req.Kwargs, big); err != nil {
		return nil, false, err
	}
	// The request's own fields win over chat_template_kwargs of the same
	// name, as vLLM merges them.
	data["add_generation_prompt"] = jinja.NewBool(req.AddGenerationPrompt)
	if !isNull(req.Documents) {
		if data["documents"], err = big.decode(req.Documents); err != nil {
			return nil, false, err
		}
	}
	if req.ReasoningEffort != "" {
		data["reasoning_effort"] = jinja.NewString(req.ReasoningEffort)
		if !kwargsHave(req.Kwargs, "enable_thinking") {
			data["enable_thinking"] = jinja.NewBool(req.ReasoningEffort != "none")
		}
	}
	return data, media >= 0, nil
}

// kwargsHave reports whether the chat_template_kwargs object has key (even
// as null: vLLM checks for the name).
func kwargsHave(raw json.RawMessage, key string) bool {
	if isNull(raw) {
		return false
	}
	var kw map[string]json.RawMessage
	if json.Unmarshal(raw, &kw) != nil {
		return false
	}
	_, ok := kw[key]
	return ok
}

func (c *ChatTemplate) addKwargs(data map[string]jinja.Value, raw json.RawMessage, big *bigInts) error {
	if isNull(raw) {
		return nil
	}
	kw, err := big.decode(raw)
	if err != nil {
		return err
	}
	if !kw.IsDict() {
		return fmt.Errorf("decoding chat_template_kwargs: not an object: %w", ErrMalformed)
	}
	d := kw.AsDict()
	for _, k := range d.OrderedKeys() {
		data[k], _ = d.Get(k)
	}
	return nil
}

// strftime formats the injectable clock with Python strftime directives.
func (c *ChatTemplate) strftime(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	format := "%Y-%m-%d"
	if len(args) > 0 && args[0].IsString() {
		format = args[0].AsString()
	}
	return jinja.NewString(pyStrftime(c.now(), format)), nil
}

// EncodeChat renders a chat request and encodes it, adding special tokens
// only when req.AddSpecialTokens asks, as vLLM does for chat prompts (the
// template writes them).
func (t *Tokenizer) EncodeChat(c *ChatTemplate, req ChatRequest) ([]uint32, error) {
	ids, _, err := t.encodeChat(c, req)
	return ids, err
}

// encodeChat is EncodeChat, also reporting a render cut before media.
func (t *Tokenizer) encodeChat(c *ChatTemplate, req ChatRequest) ([]uint32, bool, error) {
	text, media, err := c.render(req)
	if err != nil {
		return nil, false, err
	}
	ids, err := t.Encode(text, req.AddSpecialTokens)
	if err == nil && media {
		ids = t.TrimToAdded(ids, 0)
	}
	return ids, media, err
}
