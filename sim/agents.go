package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/extproc"
	"github.com/warmroute/warmroute/scorer"
)

// The agent APIs, minimally: POST /v1/responses (with stored responses, per
// process, for previous_response_id) and POST /v1/messages. Both convert the
// body to the chat request vLLM renders for it (the router's own conversion,
// extproc.ParseRequest, whose goldens come from vLLM) and answer in the API's
// own JSON and SSE shapes with vLLM's usage fields: Responses
// input_tokens_details.cached_tokens always, Messages cache_read_input_tokens
// only with Options.PromptTokensDetails, as vLLM's
// --enable-prompt-tokens-details.

// outcomeResponseNotFound is a previous_response_id this process never
// stored.
const outcomeResponseNotFound = "response_not_found"

// agentAPI is one of the two agent APIs.
type agentAPI uint8

const (
	apiResponses agentAPI = iota
	apiMessages
)

func (a agentAPI) name() string {
	if a == apiResponses {
		return "responses"
	}
	return "messages"
}

func (a agentAPI) path() string {
	if a == apiResponses {
		return "/v1/responses"
	}
	return "/v1/messages"
}

// responseStore keeps each stored response's conversation (the converted
// messages and the answer), as vLLM's serving process does, forever.
type responseStore struct {
	mu    sync.Mutex
	convs map[string][]json.RawMessage
}

func (rs *responseStore) get(id string) ([]json.RawMessage, bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	c, ok := rs.convs[id]
	return c, ok
}

func (rs *responseStore) put(id string, conv []json.RawMessage) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.convs == nil {
		rs.convs = map[string][]json.RawMessage{}
	}
	rs.convs[id] = conv
}

// errResponseNotFound is vLLM's 404 for an unknown previous_response_id.
type errResponseNotFound struct{ id string }

func (e errResponseNotFound) Error() string {
	return fmt.Sprintf("Response with id '%s' not found.", e.id)
}

func (s *Server) agent(a agentAPI) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		outcome := s.serveAgent(w, r, a)
		s.metrics.requests.WithLabelValues(a.name(), outcome).Inc()
	})
}

// agentRequest is a decoded agent request.
type agentRequest struct {
	Request
	stream bool
	store  bool
	conv   []json.RawMessage // the conversation as rendered
}

func (s *Server) serveAgent(w http.ResponseWriter, r *http.Request, a agentAPI) string {
	req, err := s.readAgent(w, r, a)
	if err != nil {
		return writeAgentError(w, a, err)
	}
	seq, err := s.engine.Submit(r.Context(), req.Request)
	if err != nil {
		return writeAgentError(w, a, err)
	}
	defer seq.Close()
	id := "resp_" + strconv.FormatUint(rand.Uint64(), 16)
	if a == apiMessages {
		id = "msg_" + strconv.FormatUint(rand.Uint64(), 16)
	}
	if !req.stream {
		text, err := drainText(r.Context(), seq)
		if err != nil {
			return writeAgentError(w, a, err)
		}
		s.storeResponse(a, req, id, text)
		if a == apiResponses {
			writeJSON(w, http.StatusOK, s.responsesBody(id, req, text, "completed", seq.Usage(), true))
		} else {
			writeJSON(w, http.StatusOK, s.messagesBody(id, req.Model, text, seq.Usage(), true))
		}
		return outcomeOK
	}
	return s.streamAgent(r.Context(), w, a, req, seq, id)
}

func (s *Server) readAgent(w http.ResponseWriter, r *http.Request, a agentAPI) (agentRequest, error) {
	f, err := parseFault(r.Header)
	if err != nil {
		return agentRequest{}, err
	}
	body, err := s.readBody(w, r)
	if err != nil {
		return agentRequest{}, err
	}
	if err := f.apply(r.Context()); err != nil {
		return agentRequest{}, err
	}
	req, err := s.decodeAgent(a, body)
	if err != nil {
		return agentRequest{}, err
	}
	if err := s.checkModel(&req.Request); err != nil {
		return agentRequest{}, err
	}
	req.FailPrefill = f.failPrefill
	return req, nil
}

type agentFields struct {
	MaxTokens          *int   `json:"max_tokens"`
	MaxOutputTokens    *int   `json:"max_output_tokens"`
	PreviousResponseID string `json:"previous_response_id"`
	Store              *bool  `json:"store"`
}

// decodeAgent converts the body to its chat request; a Responses request
// with previous_response_id continues the stored conversation, leaving out
// its system messages (instructions do not carry over), as vLLM does.
func (s *Server) decodeAgent(a agentAPI, body []byte) (agentRequest, error) {
	cr, err := extproc.ParseRequest(a.path(), body)
	if err != nil {
		return agentRequest{}, fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	if cr.Kind != scorer.KindChat {
		return agentRequest{}, fmt.Errorf("%w: the simulator does not convert this request", ErrUnsupported)
	}
	var f agentFields
	_ = json.Unmarshal(body, &f) // ParseRequest read the same object
	req := agentRequest{Request: Request{Model: cr.Model, CacheSalt: cr.CacheSalt}, stream: cr.Stream,
		store: a == apiResponses && (f.Store == nil || *f.Store)}
	for _, mt := range []*int{f.MaxTokens, f.MaxOutputTokens} {
		if mt != nil && *mt > 0 {
			req.MaxTokens = *mt
		}
	}
	if f.PreviousResponseID != "" {
		prev, ok := s.stored.get(f.PreviousResponseID)
		if !ok {
			return agentRequest{}, errResponseNotFound{f.PreviousResponseID}
		}
		for _, m := range prev {
			var role struct {
				Role string `json:"role"`
			}
			if json.Unmarshal(m, &role) == nil && role.Role != "system" {
				req.conv = append(req.conv, m)
			}
		}
		// Current instructions lead, then the history, then the new turn.
		var lead, rest []json.RawMessage
		for i, m := range cr.Messages {
			if i == 0 && m.Role == "system" {
				lead = append(lead, json.RawMessage(m.Raw))
				continue
			}
			rest = append(rest, json.RawMessage(m.Raw))
		}
		req.conv = append(append(lead, req.conv...), rest...)
	} else {
		for _, m := range cr.Messages {
			req.conv = append(req.conv, json.RawMessage(m.Raw))
		}
	}
	msgs, err := json.Marshal(req.conv)
	if err != nil {
		return agentRequest{}, fmt.Errorf("encoding messages: %w", err)
	}
	req.Chat = &ChatPrompt{Messages: msgs, Tools: json.RawMessage(cr.Tools), Kwargs: json.RawMessage(cr.ChatTemplateKwargs),
		AddGenerationPrompt: !cr.NoGenerationPrompt, Documents: json.RawMessage(cr.Documents),
		ReasoningEffort: cr.ReasoningEffort, ContinueFinalMessage: cr.ContinueFinalMessage, Template: cr.ChatTemplate}
	if cr.SpecialTokens != scorer.SpecialTokensDefault {
		on := cr.AddSpecialTokens()
		req.AddSpecialTokens = &on
	}
	if req.Prompt, err = flattenRawChat(*req.Chat); err != nil {
		return agentRequest{}, err
	}
	return req, nil
}

// storeResponse keeps a stored Responses answer for previous_response_id.
func (s *Server) storeResponse(a agentAPI, req agentRequest, id, text string) {
	if a != apiResponses || !req.store {
		return
	}
	answer, _ := json.Marshal(map[string]string{"role": "assistant", "content": text})
	s.stored.put(id, append(append([]json.RawMessage(nil), req.conv...), answer))
}

func drainText(ctx context.Context, seq *Sequence) (string, error) {
	var text strings.Builder
	for {
		tok, err := seq.Next(ctx)
		if errors.Is(err, io.EOF) {
			return text.String(), nil
		}
		if err != nil {
			return "", err
		}
		text.WriteString(tok.Text)
	}
}

func (s *Server) responsesBody(id string, req agentRequest, text, status string, u Usage, withUsage bool) map[string]any {
	body := map[string]any{
		"id": id, "object": "response", "created_at": time.Now().Unix(), "model": req.Model, "status": status,
		"store": req.store, "output": []any{},
	}
	if text != "" || status == "completed" {
		body["output"] = []any{map[string]any{"type": "message", "id": "msg_" + id[len("resp_"):], "role": "assistant",
			"status": "completed", "content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}}
	}
	if !withUsage {
		body["usage"] = nil
		return body
	}
	body["usage"] = map[string]any{
		"input_tokens": u.PromptTokens, "output_tokens": u.CompletionTokens, "total_tokens": u.TotalTokens(),
		"input_tokens_details":  map[string]any{"cached_tokens": u.CachedTokens, "cache_write_tokens": 0},
		"output_tokens_details": map[string]any{"reasoning_tokens": 0},
	}
	return body
}

// anthropicUsage is vLLM's: input_tokens excludes the cache read, which is
// reported only with prompt token details on.
func (s *Server) anthropicUsage(u Usage) map[string]any {
	m := map[string]any{"input_tokens": u.PromptTokens, "output_tokens": u.CompletionTokens}
	if s.opts.PromptTokensDetails {
		m["input_tokens"] = u.PromptTokens - u.CachedTokens
		m["cache_read_input_tokens"] = u.CachedTokens
	}
	return m
}

func (s *Server) messagesBody(id, model, text string, u Usage, done bool) map[string]any {
	body := map[string]any{"id": id, "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": s.anthropicUsage(u)}
	if done {
		body["content"] = []any{map[string]any{"type": "text", "text": text}}
		body["stop_reason"] = "end_turn"
	}
	return body
}

// sendEvent writes one named event.
func (sw *sseWriter) sendEvent(name string, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding stream event: %w", err)
	}
	if _, err := io.WriteString(sw.w, "event: "+name+"\n"); err != nil {
		return fmt.Errorf("writing stream event: %w: %w", errClientGone, err)
	}
	return sw.write(body)
}

func (s *Server) streamAgent(ctx context.Context, w http.ResponseWriter, a agentAPI, req agentRequest, seq *Sequence, id string) string {
	sw := newSSEWriter(w)
	var err error
	if a == apiResponses {
		// The response is stored when it starts, so its id is usable at once.
		s.storeResponse(a, req, id, "")
		err = sw.sendEvent("response.created", map[string]any{"type": "response.created", "sequence_number": 0,
			"response": s.responsesBody(id, req, "", "in_progress", Usage{}, false)})
	} else {
		err = sw.sendEvent("message_start", map[string]any{"type": "message_start",
			"message": s.messagesBody(id, req.Model, "", seq.Usage(), false)})
	}
	if err != nil {
		return outcomeCancelled
	}
	var text strings.Builder
	for n := 1; ; n++ {
		tok, err := seq.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return streamFailed(ctx, sw, err)
		}
		text.WriteString(tok.Text)
		if a == apiResponses {
			err = sw.sendEvent("response.output_text.delta", map[string]any{"type": "response.output_text.delta",
				"sequence_number": n, "delta": tok.Text})
		} else {
			err = sw.sendEvent("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "text_delta", "text": tok.Text}})
		}
		if err != nil {
			return outcomeCancelled
		}
	}
	if a == apiResponses {
		s.storeResponse(a, req, id, text.String())
		err = sw.sendEvent("response.completed", map[string]any{"type": "response.completed",
			"response": s.responsesBody(id, req, text.String(), "completed", seq.Usage(), true)})
	} else {
		err = sw.sendEvent("message_delta", map[string]any{"type": "message_delta",
			"delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil}, "usage": s.anthropicUsage(seq.Usage())})
		if err == nil {
			err = sw.sendEvent("message_stop", map[string]any{"type": "message_stop"})
		}
	}
	if err != nil {
		return outcomeCancelled
	}
	return outcomeOK
}

// writeAgentError answers err in the API's error shape.
func writeAgentError(w http.ResponseWriter, a agentAPI, err error) string {
	status, errType, outcome := classify(err)
	var nf errResponseNotFound
	param := (*string)(nil)
	if errors.As(err, &nf) {
		status, errType, outcome = http.StatusNotFound, api.ErrTypeInvalidRequest, outcomeResponseNotFound
		p := "response_id"
		param = &p
	}
	if a == apiMessages {
		writeJSON(w, status, map[string]any{"type": "error",
			"error": map[string]any{"type": extproc.AnthropicErrorType(status), "message": err.Error()}})
		return outcome
	}
	writeJSON(w, status, api.ErrorResponse{Error: api.ErrorDetail{Message: err.Error(), Type: errType, Code: status, Param: param}})
	return outcome
}
