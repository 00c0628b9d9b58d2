package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// tokenizeBody is vLLM's POST /tokenize request: a completion prompt or a
// chat, with vLLM's defaults for add_special_tokens (true for a prompt,
// false for a chat) and add_generation_prompt (true).
type tokenizeBody struct {
	Model               string          `json:"model"`
	Prompt              *string         `json:"prompt"`
	Messages            json.RawMessage `json:"messages"`
	Tools               json.RawMessage `json:"tools"`
	ChatTemplateKwargs  json.RawMessage `json:"chat_template_kwargs"`
	AddSpecialTokens    *bool           `json:"add_special_tokens"`
	AddGenerationPrompt *bool           `json:"add_generation_prompt"`
	// vLLM's /tokenize has no documents or reasoning_effort (clients send
	// them as chat_template_kwargs); it reads these two.
	ContinueFinalMessage bool   `json:"continue_final_message"`
	ChatTemplate         string `json:"chat_template"`
}

type tokenizeResponse struct {
	Count       int   `json:"count"`
	MaxModelLen int   `json:"max_model_len"`
	Tokens      []int `json:"tokens"`
}

func (s *Server) tokenize(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		writeError(w, err)
		return
	}
	req, addSpecial, err := decodeTokenize(body)
	if err == nil && req.Model != "" {
		err = s.checkModel(&req)
	}
	var ids []int
	if err == nil {
		ids, err = s.engine.Tokenize(req, addSpecial)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	if ids == nil {
		ids = []int{}
	}
	writeJSON(w, http.StatusOK, tokenizeResponse{Count: len(ids), MaxModelLen: s.opts.MaxModelLen, Tokens: ids})
}

func decodeTokenize(body []byte) (Request, bool, error) {
	var b tokenizeBody
	if err := json.Unmarshal(body, &b); err != nil {
		return Request{}, false, fmt.Errorf("decoding tokenize request: %w: %w", ErrMalformedJSON, err)
	}
	hasMessages := len(b.Messages) > 0 && string(b.Messages) != "null"
	if (b.Prompt == nil) == !hasMessages {
		return Request{}, false, fmt.Errorf("decoding tokenize request: %w: exactly one of prompt and messages is required", ErrInvalidRequest)
	}
	req := Request{Model: b.Model}
	if b.Prompt != nil {
		req.Prompt = *b.Prompt
		return req, b.AddSpecialTokens == nil || *b.AddSpecialTokens, nil
	}
	req.Chat = &ChatPrompt{Messages: b.Messages, Tools: b.Tools, Kwargs: b.ChatTemplateKwargs,
		AddGenerationPrompt:  b.AddGenerationPrompt == nil || *b.AddGenerationPrompt,
		ContinueFinalMessage: b.ContinueFinalMessage, Template: b.ChatTemplate}
	return req, b.AddSpecialTokens != nil && *b.AddSpecialTokens, nil
}
