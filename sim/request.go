package sim

import (
	"encoding/json"
	"errors"
	"fmt"
)

// apiRequest is a decoded /v1/completions or /v1/chat/completions body.
type apiRequest struct {
	Request
	Stream       bool
	IncludeUsage bool
	// remoteDecode: the request is a prefill for a remote decoder
	// (kv_transfer_params.do_remote_decode, pd.go).
	remoteDecode bool
	body         []byte // as received, for a decoder's prefiller
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// commonFields are the body fields both APIs share.
type commonFields struct {
	Model         string         `json:"model"`
	MaxTokens     *int           `json:"max_tokens"`
	N             *int           `json:"n"`
	Stream        bool           `json:"stream"`
	StreamOptions *streamOptions `json:"stream_options"`
	CacheSalt     *string        `json:"cache_salt"`
	// KVTransfer is vLLM's kv_transfer_params (pd.go).
	KVTransfer *kvTransferRequest `json:"kv_transfer_params"`
	// AddSpecialTokens is add_special_tokens, read by both APIs.
	AddSpecialTokens *bool `json:"add_special_tokens"`
}

func (c commonFields) toRequest(maxTokens *int) (apiRequest, error) {
	if c.Model == "" {
		return apiRequest{}, ErrMissingModel
	}
	if c.N != nil && *c.N != 1 {
		return apiRequest{}, fmt.Errorf("%w: n must be 1, got %d", ErrUnsupported, *c.N)
	}
	r := apiRequest{Request: Request{Model: c.Model, AddSpecialTokens: c.AddSpecialTokens}, Stream: c.Stream}
	if c.CacheSalt != nil {
		if *c.CacheSalt == "" {
			return apiRequest{}, fmt.Errorf("%w: cache_salt must not be empty", ErrInvalidRequest)
		}
		r.CacheSalt = *c.CacheSalt
	}
	if maxTokens != nil {
		if *maxTokens < 1 {
			return apiRequest{}, fmt.Errorf("%w, got %d", ErrBadMaxTokens, *maxTokens)
		}
		r.MaxTokens = *maxTokens
	}
	r.IncludeUsage = c.Stream && c.StreamOptions != nil && c.StreamOptions.IncludeUsage
	r.remoteDecode = c.KVTransfer != nil && c.KVTransfer.DoRemoteDecode
	return r, nil
}

type completionBody struct {
	commonFields
	Prompt json.RawMessage `json:"prompt"`
}

// decodeCompletion decodes a /v1/completions body. The prompt may be a
// string, token ids, or a one-element list of either; longer lists are
// batches, which the simulator does not serve.
func decodeCompletion(body []byte) (apiRequest, error) {
	var b completionBody
	if err := json.Unmarshal(body, &b); err != nil {
		return apiRequest{}, fmt.Errorf("decoding completion request: %w: %w", ErrMalformedJSON, err)
	}
	r, err := b.toRequest(b.MaxTokens)
	if err != nil {
		return apiRequest{}, fmt.Errorf("decoding completion request: %w", err)
	}
	if r.Prompt, r.Tokens, err = decodePrompt(b.Prompt); err != nil {
		return apiRequest{}, fmt.Errorf("decoding completion request: %w", err)
	}
	return r, nil
}

// errPromptShape is any prompt that is neither a string nor token ids.
var errPromptShape = fmt.Errorf("%w: prompt must be a string, a list of token ids, or a one-element list of either", ErrMalformedJSON)

func decodePrompt(raw json.RawMessage) (string, []int, error) {
	if len(raw) == 0 {
		return "", nil, ErrEmptyPrompt
	}
	text, ids, err := decodeSinglePrompt(raw)
	if !errors.Is(err, errPromptShape) {
		return text, ids, err
	}
	var batch []json.RawMessage
	if json.Unmarshal(raw, &batch) != nil || len(batch) == 0 {
		return "", nil, errPromptShape
	}
	if len(batch) > 1 {
		return "", nil, fmt.Errorf("%w: batched prompts (%d)", ErrUnsupported, len(batch))
	}
	return decodeSinglePrompt(batch[0])
}

// decodeSinglePrompt accepts a non-empty string or non-empty list of
// non-negative token ids; JSON null counts as an empty string.
func decodeSinglePrompt(raw json.RawMessage) (string, []int, error) {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		if text == "" {
			return "", nil, ErrEmptyPrompt
		}
		return text, nil, nil
	}
	var ids []int
	if json.Unmarshal(raw, &ids) != nil {
		return "", nil, errPromptShape
	}
	if len(ids) == 0 {
		return "", nil, ErrEmptyPrompt
	}
	for i, id := range ids {
		if id < 0 {
			return "", nil, fmt.Errorf("%w: prompt token %d is negative", ErrInvalidRequest, i)
		}
	}
	return "", ids, nil
}

type chatBody struct {
	commonFields
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Messages            []chatMessage   `json:"messages"`
	Tools               json.RawMessage `json:"tools"`
	AddGenerationPrompt *bool           `json:"add_generation_prompt"`
	ChatTemplateKwargs  json.RawMessage `json:"chat_template_kwargs"`
	chatFields
}

// chatFields are the chat fields vLLM's renderer reads besides messages,
// tools and chat_template_kwargs.
type chatFields struct {
	Documents            json.RawMessage `json:"documents"`
	ReasoningEffort      string          `json:"reasoning_effort"`
	ContinueFinalMessage bool            `json:"continue_final_message"`
	ChatTemplate         string          `json:"chat_template"`
}

func (f chatFields) apply(c *ChatPrompt) {
	c.Documents, c.ReasoningEffort = f.Documents, f.ReasoningEffort
	c.ContinueFinalMessage, c.Template = f.ContinueFinalMessage, f.ChatTemplate
}

// rawMessages keeps the messages exactly as sent, for a real chat template.
type rawMessages struct {
	Messages json.RawMessage `json:"messages"`
}

// decodeChat decodes a /v1/chat/completions body and flattens its messages
// into the prompt text. max_completion_tokens wins over the deprecated
// max_tokens, as in OpenAI's API.
func decodeChat(body []byte) (apiRequest, error) {
	var b chatBody
	if err := json.Unmarshal(body, &b); err != nil {
		return apiRequest{}, fmt.Errorf("decoding chat request: %w: %w", ErrMalformedJSON, err)
	}
	maxTokens := b.MaxTokens
	if b.MaxCompletionTokens != nil {
		maxTokens = b.MaxCompletionTokens
	}
	r, err := b.toRequest(maxTokens)
	if err != nil {
		return apiRequest{}, fmt.Errorf("decoding chat request: %w", err)
	}
	if r.Prompt, err = flattenChat(b.Messages, b.Tools); err != nil {
		return apiRequest{}, fmt.Errorf("decoding chat request: %w", err)
	}
	var raw rawMessages
	json.Unmarshal(body, &raw) // cannot fail: the same body decoded above
	r.Chat = &ChatPrompt{Messages: raw.Messages, Tools: b.Tools, Kwargs: b.ChatTemplateKwargs,
		AddGenerationPrompt: b.AddGenerationPrompt == nil || *b.AddGenerationPrompt}
	b.chatFields.apply(r.Chat)
	return r, nil
}
