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
	if !isNull(req.Kwargs) {
		body["chat_template_kwargs"] = req.Kwargs
	}
	return r.call(ctx, body)
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
