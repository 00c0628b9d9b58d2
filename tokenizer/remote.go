package tokenizer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Remote asks a model server's POST /tokenize for token ids (vLLM's
// format). It is safe for concurrent use; the zero value is not usable.
type Remote struct {
	baseURL string
	client  *http.Client
}

// maxTokenizeResponse bounds the response body read from the engine.
const maxTokenizeResponse = 64 << 20

// NewRemote returns a client for the server at baseURL (for example
// "http://10.0.0.5:8000"). A nil client means http.DefaultClient.
func NewRemote(baseURL string, client *http.Client) *Remote {
	if client == nil {
		client = http.DefaultClient
	}
	return &Remote{baseURL: strings.TrimRight(baseURL, "/"), client: client}
}

type tokenizeResponse struct {
	Count  int      `json:"count"`
	Tokens []uint32 `json:"tokens"`
}

// Tokenize encodes a completion prompt remotely.
func (r *Remote) Tokenize(ctx context.Context, prompt string, addSpecial bool) ([]uint32, error) {
	return r.call(ctx, map[string]any{"prompt": prompt, "add_special_tokens": addSpecial})
}

// TokenizeChat renders and encodes a chat request remotely, with special
// tokens only when req.AddSpecialTokens asks (vLLM's chat default is off).
func (r *Remote) TokenizeChat(ctx context.Context, req ChatRequest) ([]uint32, error) {
	body := map[string]any{
		"messages":              req.Messages,
		"add_generation_prompt": req.AddGenerationPrompt,
		"add_special_tokens":    req.AddSpecialTokens,
	}
	if !isNull(req.Tools) {
		body["tools"] = req.Tools
	}
	if req.ContinueFinalMessage {
		body["continue_final_message"] = true
	}
	if req.Template != "" {
		body["chat_template"] = req.Template
	}
	kwargs, err := remoteKwargs(req)
	if err != nil {
		return nil, err
	}
	if kwargs != nil {
		body["chat_template_kwargs"] = kwargs
	}
	return r.call(ctx, body)
}

// remoteKwargs is the chat_template_kwargs to send: /tokenize has no
// documents or reasoning_effort field, so they and the template variables
// vLLM's chat endpoint derives from them are sent as kwargs, as in
// ChatTemplate.Render.
func remoteKwargs(req ChatRequest) (json.RawMessage, error) {
	if req.ReasoningEffort == "" && isNull(req.Documents) {
		if isNull(req.Kwargs) {
			return nil, nil
		}
		return req.Kwargs, nil
	}
	kw := map[string]json.RawMessage{}
	if !isNull(req.Kwargs) {
		if err := json.Unmarshal(req.Kwargs, &kw); err != nil {
			return nil, fmt.Errorf("%w: decoding chat_template_kwargs: %w", ErrRemote, err)
		}
	}
	if !isNull(req.Documents) {
		kw["documents"] = req.Documents
	}
	if req.ReasoningEffort != "" {
		effort, err := json.Marshal(req.ReasoningEffort)
		if err != nil {
			return nil, fmt.Errorf("%w: encoding reasoning_effort: %w", ErrRemote, err)
		}
		kw["reasoning_effort"] = effort
		if _, ok := kw["enable_thinking"]; !ok {
			kw["enable_thinking"] = json.RawMessage(fmt.Sprint(req.ReasoningEffort != "none"))
		}
	}
	out, err := json.Marshal(kw)
	if err != nil {
		return nil, fmt.Errorf("%w: encoding chat_template_kwargs: %w", ErrRemote, err)
	}
	return out, nil
}

func (r *Remote) call(ctx context.Context, body map[string]any) ([]uint32, error) {
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("%w: encoding request: %w", ErrRemote, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.baseURL+"/tokenize", bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRemote, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRemote, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenizeResponse))
	if err != nil {
		return nil, fmt.Errorf("%w: reading response: %w", ErrRemote, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: status %d", ErrRemote, resp.StatusCode)
	}
	var out tokenizeResponse
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("%w: decoding response: %w", ErrRemote, err)
	}
	if out.Count != len(out.Tokens) {
		return nil, fmt.Errorf("%w: count %d but %d tokens", ErrRemote, out.Count, len(out.Tokens))
	}
	return out.Tokens, nil
}
