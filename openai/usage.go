package openai

import (
	"bytes"
	"encoding/json/jsontext"
	json "encoding/json/v2"
)

// Usage is the usage object of a completion or chat completion response, or
// of a stream's usage chunk. A pointer field is nil when the member is absent
// or null. A plain value.
type Usage struct {
	PromptTokens        *int                 `json:"prompt_tokens,omitempty"`
	CompletionTokens    *int                 `json:"completion_tokens,omitempty"`
	TotalTokens         *int                 `json:"total_tokens,omitempty"`
	PromptTokensDetails *PromptTokensDetails `json:"prompt_tokens_details,omitempty"`
}

// PromptTokensDetails is usage.prompt_tokens_details. vLLM sends it only when
// started with --enable-prompt-tokens-details.
type PromptTokensDetails struct {
	CachedTokens *int `json:"cached_tokens,omitempty"`
}

// Prompt returns prompt_tokens, or 0 when it was not reported.
func (u *Usage) Prompt() int {
	if u == nil || u.PromptTokens == nil {
		return 0
	}
	return *u.PromptTokens
}

// Cached returns prompt_tokens_details.cached_tokens, or nil when it was not
// reported.
func (u *Usage) Cached() *int {
	if u == nil || u.PromptTokensDetails == nil {
		return nil
	}
	return u.PromptTokensDetails.CachedTokens
}

// CachedPrompt returns the prompt and cached token counts when both are
// reported and consistent (0 <= cached <= prompt). ok is false otherwise: a
// missing or null cached_tokens says nothing about the cache, and numbers
// that do not add up are not to be learnt from.
func (u *Usage) CachedPrompt() (prompt, cached int, ok bool) {
	c := u.Cached()
	if c == nil || u.PromptTokens == nil {
		return 0, 0, false
	}
	prompt, cached = *u.PromptTokens, *c
	if cached < 0 || cached > prompt {
		return 0, 0, false
	}
	return prompt, cached, true
}

// decodeOptions accept duplicate member names (the last one wins), as
// engines' JSON encoders never produce them and clients' parsers accept them.
var decodeOptions = jsontext.AllowDuplicateNames(true)

// DecodeUsage reads the top-level usage member of one JSON object: a
// non-streaming response body or one event's data. It returns nil and no
// error when there is no usage or it is null, and an error when b is not one
// well-formed JSON object or its usage has members of the wrong type.
func DecodeUsage(b []byte) (*Usage, error) {
	var w struct {
		Usage *Usage `json:"usage"`
	}
	if err := json.Unmarshal(b, &w, decodeOptions); err != nil {
		return nil, err
	}
	return w.Usage, nil
}

var usageKey = []byte(`"usage"`)

// HasUsage reports whether the JSON object data has a "usage" member whose
// value is not null. It is a byte search, not a parse, so that a stream's
// events can be sifted at little cost: vLLM sends "usage":null in every token
// event when usage is requested and the real object only in the last. An
// escaped occurrence inside a string (\"usage\") never matches, and a string
// value "usage" is not followed by a colon. A member name written with
// escapes (\u0075sage) is not found.
func HasUsage(data []byte) bool {
	for {
		i := bytes.Index(data, usageKey)
		if i < 0 {
			return false
		}
		data = data[i+len(usageKey):]
		rest := skipSpace(data)
		if len(rest) == 0 || rest[0] != ':' {
			continue
		}
		rest = skipSpace(rest[1:])
		if len(rest) > 0 && rest[0] != 'n' {
			return true
		}
	}
}

// skipSpace drops leading JSON whitespace; bytes.TrimLeft would build its
// cutset on every call of this per-event path.
func skipSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}
