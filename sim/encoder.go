package sim

import (
	"encoding/json"
	"fmt"

	"github.com/warmroute/warmroute/tokenizer"
)

// ChatPrompt is a chat request as a chat template reads it; the fields hold
// raw JSON so the real template sees every message field in its order. A
// plain value.
type ChatPrompt struct {
	Messages            json.RawMessage
	Tools               json.RawMessage
	Kwargs              json.RawMessage
	AddGenerationPrompt bool
	// Documents, ReasoningEffort, ContinueFinalMessage and Template are the
	// request's documents, reasoning_effort, continue_final_message and
	// chat_template, rendered as vLLM renders them (tokenizer.ChatRequest).
	Documents            json.RawMessage
	ReasoningEffort      string
	ContinueFinalMessage bool
	Template             string
}

// promptEncoder turns a request's prompt into token ids. Implementations
// are safe for concurrent use.
type promptEncoder interface {
	// encode tokenizes req.Chat when set, else req.Prompt. addSpecial is
	// vLLM's add_special_tokens: true for completions, false for chat.
	encode(req Request, addSpecial bool) ([]int, error)
}

// standInEncoder uses a Tokenizer on the text the built-in template
// flattens a chat into; it ignores addSpecial, having no special tokens.
type standInEncoder struct{ tk Tokenizer }

func (s standInEncoder) encode(req Request, _ bool) ([]int, error) {
	if req.Chat != nil && req.Prompt == "" {
		text, err := flattenRawChat(*req.Chat)
		if err != nil {
			return nil, err
		}
		return s.tk.Encode(text), nil
	}
	return s.tk.Encode(req.Prompt), nil
}

func flattenRawChat(c ChatPrompt) (string, error) {
	var msgs []chatMessage
	if err := json.Unmarshal(c.Messages, &msgs); err != nil {
		return "", fmt.Errorf("decoding messages: %w: %w", ErrMalformedJSON, err)
	}
	return flattenChat(msgs, c.Tools)
}

// hfEncoder is the project's tokenizer with the model's chat template (or
// Harmony for GPT-OSS): the same ids the router computes and vLLM would.
type hfEncoder struct {
	tk      *tokenizer.Tokenizer
	chat    *tokenizer.ChatTemplate // nil: the model has no template
	harmony *tokenizer.HarmonyChat  // set for a Harmony vocabulary
}

func loadHFEncoder(dir string) (*hfEncoder, error) {
	tk, err := tokenizer.LoadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("loading tokenizer from %s: %w", dir, err)
	}
	if tk.Harmony() {
		return &hfEncoder{tk: tk, harmony: tokenizer.NewHarmonyChat(tokenizer.UTCDate)}, nil
	}
	chat, _ := tk.ChatTemplate() // absent: chat requests get ErrNoChatTemplate
	return &hfEncoder{tk: tk, chat: chat}, nil
}

func (h *hfEncoder) encode(req Request, addSpecial bool) ([]int, error) {
	text := req.Prompt
	if req.Chat != nil {
		c := req.Chat
		cr := tokenizer.ChatRequest{Messages: c.Messages, Tools: c.Tools, Kwargs: c.Kwargs,
			AddGenerationPrompt: c.AddGenerationPrompt, AddSpecialTokens: addSpecial, Documents: c.Documents,
			ReasoningEffort: c.ReasoningEffort, ContinueFinalMessage: c.ContinueFinalMessage, Template: c.Template}
		var err error
		switch {
		case h.harmony != nil:
			// vLLM encodes a Harmony prompt part by part, special tokens as
			// such and every text as plain text.
			return h.encodeHarmony(cr)
		case h.chat == nil:
			return nil, ErrNoChatTemplate
		default:
			text, err = h.chat.Render(cr)
		}
		if err != nil {
			return nil, fmt.Errorf("rendering chat template: %w: %w", ErrInvalidRequest, err)
		}
	}
	ids, err := h.tk.Encode(text, addSpecial)
	if err != nil {
		return nil, fmt.Errorf("tokenizing prompt: %w: %w", ErrInvalidRequest, err)
	}
	return intIDs(ids), nil
}

func (h *hfEncoder) encodeHarmony(cr tokenizer.ChatRequest) ([]int, error) {
	p, err := h.harmony.Render(cr)
	if err != nil {
		return nil, fmt.Errorf("rendering chat template: %w: %w", ErrInvalidRequest, err)
	}
	ids, err := h.tk.AppendHarmony(nil, p)
	if err != nil {
		return nil, fmt.Errorf("tokenizing prompt: %w: %w", ErrInvalidRequest, err)
	}
	return intIDs(ids), nil
}

func intIDs(ids []uint32) []int {
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = int(id)
	}
	return out
}
