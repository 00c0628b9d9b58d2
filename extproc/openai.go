package extproc

import (
	"bytes"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"fmt"
	"strings"

	"github.com/warmroute/warmroute/scorer"
)

// Paths of the OpenAI APIs whose bodies the router parses.
const (
	pathCompletions     = "/v1/completions"
	pathChatCompletions = "/v1/chat/completions"
)

// wireRequest holds the top-level fields the router reads. Values stay raw so
// every type mistake can be reported precisely; encoding/json/v2 matches names
// case-sensitively, as the engines do.
type wireRequest struct {
	Model              jsontext.Value `json:"model"`
	Prompt             promptValue    `json:"prompt"`
	Messages           jsontext.Value `json:"messages"`
	Tools              jsontext.Value `json:"tools"`
	ChatTemplateKwargs jsontext.Value `json:"chat_template_kwargs"`
	Stream             jsontext.Value `json:"stream"`
	CacheSalt          jsontext.Value `json:"cache_salt"`
	// AddGenerationPrompt is read for chat requests only, as vLLM does.
	AddGenerationPrompt jsontext.Value `json:"add_generation_prompt"`
	// AddSpecialTokens is read for both kinds; its default differs
	// (scorer.Request.AddSpecialTokens).
	AddSpecialTokens jsontext.Value `json:"add_special_tokens"`
	// ReasoningEffort is read for chat requests only: vLLM passes it to the
	// chat template.
	ReasoningEffort jsontext.Value `json:"reasoning_effort"`
	Documents       jsontext.Value `json:"documents"`
	StreamOptions   jsontext.Value `json:"stream_options"`
	// ContinueFinalMessage and ChatTemplate are read for chat requests
	// only, as vLLM does.
	ContinueFinalMessage jsontext.Value `json:"continue_final_message"`
	ChatTemplate         jsontext.Value `json:"chat_template"`
	// ToolChoice is kept for SGLang pools, whose templates see no tools
	// under "none" and only the named one under a function choice.
	ToolChoice jsontext.Value `json:"tool_choice"`
}

// wireStreamOptions is stream_options; only include_usage matters to the
// router (whether a streaming response will end with a usage event).
type wireStreamOptions struct {
	IncludeUsage jsontext.Value `json:"include_usage"`
}

// requestExtras is what the router reads from a request for its response
// rather than for routing.
type requestExtras struct {
	includeUsage bool
	// store is a Responses request's store (vLLM's default true): whether
	// the engine may keep the response for a later previous_response_id.
	store bool
}

// decodeOptions accept duplicate member names (the last one wins) because the
// engines' Python JSON decoders do; rejecting them would turn requests the
// engine serves into 400s.
var decodeOptions = jsontext.AllowDuplicateNames(true)

// ParseRequest reads an OpenAI request body sent to path (a query string is
// ignored). /v1/completions and /v1/chat/completions are parsed fully, and
// /v1/responses and /v1/messages converted to the chat request vLLM renders
// for them (openai_responses.go, anthropic.go); any
// problem is returned as an error matching one of the 400-class sentinels;
// other paths never fail: their body is only searched for a top-level "model"
// string and the request is routed on load alone.
func ParseRequest(path string, body []byte) (*scorer.Request, error) {
	req, _, err := parseRequest(path, body)
	return req, err
}

func parseRequest(path string, body []byte) (*scorer.Request, requestExtras, error) {
	var extra requestExtras
	path, _, _ = strings.Cut(path, "?")
	switch path {
	case pathResponses:
		return parseResponses(path, body)
	case pathMessages:
		return parseMessages(path, body)
	}
	req := &scorer.Request{Kind: kindOf(path), Path: path, BodyBytes: len(body)}
	if req.Kind == scorer.KindOther {
		req.Model = sniffModel(body)
		return req, extra, nil
	}
	var w wireRequest
	if err := decodeObject(body, &w); err != nil {
		return nil, extra, err
	}
	if err := w.readCommon(req, &extra); err != nil {
		return nil, extra, err
	}
	var err error
	if req.Kind == scorer.KindCompletion {
		err = readPrompt(w.Prompt, req)
	} else {
		err = w.readChat(req)
	}
	if err != nil {
		return nil, extra, err
	}
	return req, extra, nil
}

// routeOnLoad describes a request whose body is unavailable or incomplete: it
// carries what can be read cheaply and is routed on load alone.
func routeOnLoad(path string, body []byte) *scorer.Request {
	path, _, _ = strings.Cut(path, "?")
	return &scorer.Request{Kind: scorer.KindOther, Path: path, Model: sniffModel(body), BodyBytes: len(body)}
}

func kindOf(path string) scorer.Kind {
	switch path {
	case pathCompletions:
		return scorer.KindCompletion
	case pathChatCompletions:
		return scorer.KindChat
	default:
		return scorer.KindOther
	}
}

func decodeObject(body []byte, w *wireRequest) error {
	if jsontext.Value(body).Kind() != '{' {
		return fmt.Errorf("%w: the body must be a JSON object", ErrMalformedJSON)
	}
	if err := json.Unmarshal(body, w, decodeOptions); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformedJSON, err)
	}
	return nil
}

func (w *wireRequest) readCommon(req *scorer.Request, extra *requestExtras) error {
	if w.Model.Kind() != '"' {
		return &fieldError{"model", ErrMissingModel}
	}
	if err := json.Unmarshal(w.Model, &req.Model); err != nil || req.Model == "" {
		return &fieldError{"model", ErrMissingModel}
	}
	if err := optional(w.Stream, "stream", "a boolean", &req.Stream); err != nil {
		return err
	}
	if err := w.readStreamOptions(extra); err != nil {
		return err
	}
	if err := w.readSpecialTokens(req); err != nil {
		return err
	}
	return optional(w.CacheSalt, "cache_salt", "a string", &req.CacheSalt)
}

// readSpecialTokens reads add_special_tokens. Absent or null keeps the
// engine's default for the request's kind: vLLM adds special tokens (BOS) to
// a completion prompt and not to a rendered chat, whose template writes them.
func (w *wireRequest) readSpecialTokens(req *scorer.Request) error {
	if isNull(w.AddSpecialTokens) {
		return nil
	}
	var on bool
	if err := optional(w.AddSpecialTokens, "add_special_tokens", "a boolean", &on); err != nil {
		return err
	}
	req.SpecialTokens = scorer.SpecialTokensOff
	if on {
		req.SpecialTokens = scorer.SpecialTokensOn
	}
	return nil
}

// readStreamOptions reads stream_options.include_usage. vLLM rejects
// stream_options on a non-streaming request; the router leaves that to the
// engine and only checks types.
func (w *wireRequest) readStreamOptions(extra *requestExtras) error {
	if isNull(w.StreamOptions) {
		return nil
	}
	var so wireStreamOptions
	if w.StreamOptions.Kind() != '{' || json.Unmarshal(w.StreamOptions, &so, decodeOptions) != nil {
		return wrongType("stream_options", "an object")
	}
	return optional(so.IncludeUsage, "stream_options.include_usage", "a boolean", &extra.includeUsage)
}

// optional decodes v into out unless it is absent or null.
func optional(v jsontext.Value, field, want string, out any) error {
	if isNull(v) {
		return nil
	}
	if err := json.Unmarshal(v, out); err != nil {
		return wrongType(field, want)
	}
	return nil
}

func isNull(v jsontext.Value) bool { k := v.Kind(); return k == 0 || k == 'n' }

func wrongType(field, want string) error {
	return &fieldError{field, fmt.Errorf("%w: %s must be %s", ErrWrongType, field, want)}
}

const promptWant = "a string, a list of strings, a list of token ids or a list of lists of token ids"

// promptValue is a completion's prompt as decodeObject reads it: a string
// decoded straight from the body (one scan and one copy; a raw value kept
// for a later decode would cost two of each, and a 100k-token prompt is
// hundreds of kilobytes), anything else kept raw for readPrompt.
type promptValue struct {
	str   string
	isStr bool
	raw   jsontext.Value
}

// UnmarshalJSONFrom implements json.UnmarshalerFrom. A repeated "prompt"
// member replaces the earlier one, as for the other fields.
func (p *promptValue) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*p = promptValue{}
	if dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		p.str, p.isStr = tok.String(), true
		return nil
	}
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	p.raw = v.Clone()
	return nil
}

func readPrompt(p promptValue, req *scorer.Request) error {
	if p.isStr {
		req.Prompts = []string{p.str}
		return nonEmptyStrings(req.Prompts, "prompt")
	}
	v := p.raw
	switch v.Kind() {
	case 0, 'n':
		return &fieldError{"prompt", ErrEmptyPrompt}
	case '[':
		return readPromptList(v, req)
	default:
		return wrongType("prompt", promptWant)
	}
}

// readPromptList decides the list's element type from its first element and
// decodes the whole list as that type, so mixed lists fail as wrong types.
func readPromptList(v jsontext.Value, req *scorer.Request) error {
	switch first := firstElementKind(v); first {
	case ']':
		return &fieldError{"prompt", ErrEmptyPrompt}
	case '"':
		if err := json.Unmarshal(v, &req.Prompts); err != nil {
			return wrongType("prompt", promptWant)
		}
		return nonEmptyStrings(req.Prompts, "prompt")
	case '0':
		ids, err := tokenIDs(v, "prompt")
		if err != nil {
			return err
		}
		req.PromptTokenIDs = [][]int{ids}
		return nil
	case '[':
		return readTokenIDLists(v, req)
	default:
		return wrongType("prompt", promptWant)
	}
}

func readTokenIDLists(v jsontext.Value, req *scorer.Request) error {
	var lists []jsontext.Value
	if err := json.Unmarshal(v, &lists); err != nil {
		return wrongType("prompt", promptWant)
	}
	req.PromptTokenIDs = make([][]int, len(lists))
	for i, l := range lists {
		field := fmt.Sprintf("prompt[%d]", i)
		if l.Kind() != '[' {
			return wrongType(field, "a list of token ids")
		}
		ids, err := tokenIDs(l, field)
		if err != nil {
			return err
		}
		req.PromptTokenIDs[i] = ids
	}
	return nil
}

// tokenIDs decodes a non-empty list of non-negative integers.
func tokenIDs(v jsontext.Value, field string) ([]int, error) {
	// A list of numbers contains the letter n only as part of null, which
	// encoding/json would silently decode as token 0.
	if bytes.IndexByte(v, 'n') >= 0 {
		return nil, wrongType(field, "a list of token ids")
	}
	var ids []int
	if err := json.Unmarshal(v, &ids); err != nil {
		return nil, wrongType(field, "a list of token ids")
	}
	if len(ids) == 0 {
		return nil, &fieldError{field, ErrEmptyPrompt}
	}
	for _, id := range ids {
		if id < 0 {
			return nil, wrongType(field, "a list of non-negative token ids")
		}
	}
	return ids, nil
}

func nonEmptyStrings(ss []string, field string) error {
	for _, s := range ss {
		if s == "" {
			return &fieldError{field, ErrEmptyPrompt}
		}
	}
	return nil
}

// firstElementKind returns the kind of a JSON array's first element, ']' for
// an empty array and 0 when v is not an array.
func firstElementKind(v jsontext.Value) jsontext.Kind {
	rest := bytes.TrimLeft(v, " \t\r\n")
	if len(rest) == 0 || rest[0] != '[' {
		return 0
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	if len(rest) > 0 && rest[0] == ']' {
		return ']'
	}
	return jsontext.Value(rest).Kind()
}

// sniffModel returns the top-level "model" string of a JSON object body, or
// "" when there is none. It reads tokens only up to that member, so it works
// on bodies that are truncated or not JSON at all.
func sniffModel(body []byte) string {
	dec := jsontext.NewDecoder(bytes.NewReader(body), decodeOptions)
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return ""
	}
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return ""
		}
		if name.String() != "model" {
			if dec.SkipValue() != nil {
				return ""
			}
			continue
		}
		if val, err := dec.ReadToken(); err == nil && val.Kind() == '"' {
			return val.String()
		}
		return ""
	}
	return ""
}
