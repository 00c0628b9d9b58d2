package extproc

import (
	"bytes"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"strings"
)

// Usage and response ids of the agent APIs, as vLLM 0.33 reports them.
//
// Responses: the body (or, streaming, the response.completed event's
// "response") carries usage.input_tokens and
// usage.input_tokens_details.cached_tokens, always reported; with built-in
// tools one response spans several engine turns, and input_tokens_per_turn
// / cached_tokens_per_turn give the first turn, the one routed. The
// response's id and store are in the body, or in the first event
// (response.created).
//
// Messages: usage.input_tokens excludes the cache: vLLM reports
// input_tokens = prompt - cache_read_input_tokens -
// cache_creation_input_tokens, and the cache members only when started with
// --enable-prompt-tokens-details (without them the usage is unknown, as for
// chat). Streaming, message_start carries the first usage and message_delta
// the final one; the reader keeps the last.

// dialect is which API's response a reader reads.
type dialect uint8

const (
	dialectOpenAI dialect = iota
	dialectResponses
	dialectAnthropic
)

func dialectOf(path string) dialect {
	path, _, _ = strings.Cut(path, "?")
	switch path {
	case pathResponses:
		return dialectResponses
	case pathMessages:
		return dialectAnthropic
	}
	return dialectOpenAI
}

type responsesUsage struct {
	InputTokens  *int `json:"input_tokens"`
	InputDetails *struct {
		CachedTokens  *int  `json:"cached_tokens"`
		InputPerTurn  []int `json:"input_tokens_per_turn"`
		CachedPerTurn []int `json:"cached_tokens_per_turn"`
	} `json:"input_tokens_details"`
}

type responsesObject struct {
	ID    jsontext.Value  `json:"id"`
	Store jsontext.Value  `json:"store"`
	Usage *responsesUsage `json:"usage"`
}

// responsesBody is a Responses body or event: the response itself, or an
// event whose "response" member is.
type responsesBody struct {
	responsesObject
	Response *responsesObject `json:"response"`
}

func (b *responsesBody) object() *responsesObject {
	if b.Response != nil {
		return b.Response
	}
	return &b.responsesObject
}

func decodeResponsesUsage(b []byte) usage {
	var w responsesBody
	if json.Unmarshal(b, &w, decodeOptions) != nil {
		return usage{}
	}
	u := w.object().Usage
	if u == nil || u.InputTokens == nil || u.InputDetails == nil || u.InputDetails.CachedTokens == nil {
		return usage{}
	}
	prompt, cached := *u.InputTokens, *u.InputDetails.CachedTokens
	if d := u.InputDetails; len(d.InputPerTurn) > 0 && len(d.CachedPerTurn) == len(d.InputPerTurn) {
		prompt, cached = d.InputPerTurn[0], d.CachedPerTurn[0]
	}
	return checked(prompt, cached)
}

func checked(prompt, cached int) usage {
	if cached < 0 || cached > prompt {
		return usage{}
	}
	return usage{prompt: prompt, cached: cached, known: true}
}

// responseID returns a Responses body's or event's response id and whether
// it was stored; ok is false when the object carries no string id.
func responseID(b []byte) (id string, stored, ok bool) {
	var w responsesBody
	if json.Unmarshal(b, &w, decodeOptions) != nil {
		return "", false, false
	}
	o := w.object()
	if o.ID.Kind() != '"' || json.Unmarshal(o.ID, &id) != nil || id == "" {
		return "", false, false
	}
	stored = true // vLLM's default; it reports false when its store is off
	if o.Store.Kind() == 'f' {
		stored = false
	}
	return id, stored, true
}

type anthropicUsage struct {
	InputTokens   *int `json:"input_tokens"`
	CacheRead     *int `json:"cache_read_input_tokens"`
	CacheCreation *int `json:"cache_creation_input_tokens"`
}

type anthropicBody struct {
	Usage   *anthropicUsage `json:"usage"`
	Message *struct {
		Usage *anthropicUsage `json:"usage"`
	} `json:"message"`
}

func decodeAnthropicUsage(b []byte) usage {
	var w anthropicBody
	if json.Unmarshal(b, &w, decodeOptions) != nil {
		return usage{}
	}
	u := w.Usage
	if u == nil && w.Message != nil {
		u = w.Message.Usage
	}
	if u == nil || u.InputTokens == nil || u.CacheRead == nil {
		return usage{}
	}
	prompt := *u.InputTokens + *u.CacheRead
	if u.CacheCreation != nil {
		prompt += *u.CacheCreation
	}
	return checked(prompt, *u.CacheRead)
}

func decodeUsageAs(d dialect, b []byte) usage {
	switch d {
	case dialectResponses:
		return decodeResponsesUsage(b)
	case dialectAnthropic:
		return decodeAnthropicUsage(b)
	}
	return decodeUsage(b)
}

var createdEvent = []byte(`"response.created"`)

// isCreatedEvent sifts the event that first carries a response's id.
func isCreatedEvent(data []byte) bool { return bytes.Contains(data, createdEvent) }
