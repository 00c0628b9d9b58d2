package extproc

import (
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"fmt"
	"strings"
	"time"

	"github.com/warmroute/warmroute/scorer"
)

// POST /v1/messages (Anthropic's Messages API), converted to the chat request
// vLLM 0.33 renders for it (AnthropicServingMessages.to_chat_completion_request):
//   - system (a string, or text blocks joined with "") becomes a leading
//     system message; a system-role message in messages stays where it is;
//     text starting with Claude Code's per-request billing header is left out;
//   - a string content stays a string; blocks become content parts (text,
//     image as image_url with a data: URL for base64 sources), thinking
//     blocks the message's reasoning, tool_use blocks tool_calls (input as
//     JSON arguments); a single text part becomes a string content;
//   - a user's tool_result becomes a tool message placed before the user
//     message (its list content's texts joined with "\n"; its images a
//     following user message of image parts);
//   - tools (name, description, input_schema) become chat function tools;
//   - thinking.type "disabled" is reasoning_effort "none", and
//     output_config.effort sets reasoning_effort otherwise.
//
// vLLM merges inline system messages into the leading one when the chat
// template rejects a system message after the first; the router keeps them
// in place, so such a template fails to render and the request is routed on
// load. Requests the conversion does not mirror (tool_addition and
// tool_removal blocks, an assistant's tool_result with list content) are
// routed on load too, and the engine answers them as usual.

const pathMessages = "/v1/messages"

// billingHeader starts Claude Code's attribution text, which vLLM strips
// from system text because its per-request hash defeats prefix caching.
const billingHeader = "x-anthropic-billing-header"

type wireAnthropic struct {
	wireAgent
	System       jsontext.Value `json:"system"`
	Messages     jsontext.Value `json:"messages"`
	Tools        jsontext.Value `json:"tools"`
	Thinking     jsontext.Value `json:"thinking"`
	OutputConfig jsontext.Value `json:"output_config"`
}

type wireAnthropicMessage struct {
	Role    jsontext.Value `json:"role"`
	Content jsontext.Value `json:"content"`
}

type wireBlock struct {
	Type      string         `json:"type"`
	Text      *string        `json:"text"`
	Source    jsontext.Value `json:"source"`
	Thinking  *string        `json:"thinking"`
	ID        *string        `json:"id"`
	Name      *string        `json:"name"`
	Input     jsontext.Value `json:"input"`
	ToolUseID *string        `json:"tool_use_id"`
	Content   jsontext.Value `json:"content"`
}

type wireImageSource struct {
	Type      string `json:"type"`
	URL       string `json:"url"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

type wireAnthropicTool struct {
	Name        jsontext.Value `json:"name"`
	Description jsontext.Value `json:"description"`
	InputSchema jsontext.Value `json:"input_schema"`
	Strict      jsontext.Value `json:"strict"`
}

type wireThinking struct {
	Type string `json:"type"`
}

type wireOutputConfig struct {
	Effort *string `json:"effort"`
}

// errNotMirrored marks a request whose conversion the router does not
// mirror; it is routed on load rather than refused.
type errNotMirrored struct{ what string }

func (e *errNotMirrored) Error() string { return e.what + " is not mirrored" }

func parseMessages(path string, body []byte) (*scorer.Request, requestExtras, error) {
	var w wireAnthropic
	req, extra, err := decodeAgent(path, body, &w, &w.wireAgent)
	if err != nil {
		return nil, extra, err
	}
	msgs, err := anthropicMessages(w.System, w.Messages)
	var nm *errNotMirrored
	if asNotMirrored(err, &nm) {
		return &scorer.Request{Kind: scorer.KindOther, Path: path, Model: req.Model, BodyBytes: len(body)}, extra, nil
	}
	if err != nil {
		return nil, extra, err
	}
	if err := setMessages(req, msgs); err != nil {
		return nil, extra, err
	}
	if req.Tools, err = anthropicTools(w.Tools); err != nil {
		return nil, extra, err
	}
	return req, extra, readAnthropicEffort(w.Thinking, w.OutputConfig, req)
}

func asNotMirrored(err error, out **errNotMirrored) bool {
	e, ok := err.(*errNotMirrored)
	if ok {
		*out = e
	}
	return ok
}

// readAnthropicEffort applies output_config.effort, then thinking: disabled
// thinking is effort "none" (vLLM probes the template and uses "low" for
// one that ignores "none"; the router assumes a template that honours it).
func readAnthropicEffort(thinking, outputConfig jsontext.Value, req *scorer.Request) error {
	if !isNull(outputConfig) {
		var oc wireOutputConfig
		if outputConfig.Kind() != '{' || json.Unmarshal(outputConfig, &oc, decodeOptions) != nil {
			return wrongType("output_config", "an object")
		}
		if oc.Effort != nil {
			req.ReasoningEffort = *oc.Effort
		}
	}
	if isNull(thinking) {
		return nil
	}
	var t wireThinking
	if thinking.Kind() != '{' || json.Unmarshal(thinking, &t, decodeOptions) != nil {
		return wrongType("thinking", "an object")
	}
	if t.Type == "disabled" {
		req.ReasoningEffort = "none"
	}
	return nil
}

func anthropicMessages(system, messages jsontext.Value) ([]*chatMessage, error) {
	var out []*chatMessage
	sys, err := systemText(system)
	if err != nil {
		return nil, err
	}
	if sys != "" {
		out = append(out, &chatMessage{Role: "system", Content: mustString(sys)})
	}
	if messages.Kind() != '[' {
		if isNull(messages) {
			return nil, &fieldError{"messages", ErrEmptyMessages}
		}
		return nil, wrongType("messages", "a list of messages")
	}
	var raw []wireAnthropicMessage
	if json.Unmarshal(messages, &raw, decodeOptions) != nil {
		return nil, wrongType("messages", "a list of message objects")
	}
	if len(raw) == 0 {
		return nil, &fieldError{"messages", ErrEmptyMessages}
	}
	for i := range raw {
		if out, err = appendAnthropicMessage(out, &raw[i], i); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// systemText joins the top-level system field's text.
func systemText(v jsontext.Value) (string, error) {
	switch v.Kind() {
	case 0, 'n':
		return "", nil
	case '"':
		var s string
		if json.Unmarshal(v, &s) != nil {
			return "", wrongType("system", "a string or a list of text blocks")
		}
		return s, nil
	}
	var blocks []wireBlock
	if v.Kind() != '[' || json.Unmarshal(v, &blocks, decodeOptions) != nil {
		return "", wrongType("system", "a string or a list of text blocks")
	}
	return joinText(blocks), nil
}

// joinText joins text blocks' non-empty text with "", leaving out billing
// headers.
func joinText(blocks []wireBlock) string {
	var sb strings.Builder
	for _, b := range blocks {
		if b.Type == "text" && b.Text != nil && *b.Text != "" && !strings.HasPrefix(*b.Text, billingHeader) {
			sb.WriteString(*b.Text)
		}
	}
	return sb.String()
}

func appendAnthropicMessage(out []*chatMessage, m *wireAnthropicMessage, i int) ([]*chatMessage, error) {
	field := func(s string) string { return fmt.Sprintf("messages[%d]%s", i, s) }
	var role string
	if m.Role.Kind() != '"' || json.Unmarshal(m.Role, &role) != nil || role == "" {
		return nil, wrongType(field(".role"), "a non-empty string")
	}
	if m.Content.Kind() == '"' {
		var s string
		if json.Unmarshal(m.Content, &s) != nil {
			return nil, wrongType(field(".content"), "a string or a list of blocks")
		}
		if role == "system" {
			if s != "" && !strings.HasPrefix(s, billingHeader) {
				out = append(out, &chatMessage{Role: role, Content: m.Content})
			}
			return out, nil
		}
		return append(out, &chatMessage{Role: role, Content: m.Content}), nil
	}
	var blocks []wireBlock
	if m.Content.Kind() != '[' || json.Unmarshal(m.Content, &blocks, decodeOptions) != nil {
		return nil, wrongType(field(".content"), "a string or a list of blocks")
	}
	if role == "system" {
		if s := joinText(blocks); s != "" {
			out = append(out, &chatMessage{Role: role, Content: mustString(s)})
		}
		return out, nil
	}
	msg := &chatMessage{Role: role}
	var parts []map[string]any
	var reasoning strings.Builder
	hasReasoning := false
	for j := range blocks {
		b := &blocks[j]
		bf := func(s string) string { return field(fmt.Sprintf(".content[%d]%s", j, s)) }
		switch b.Type {
		case "text":
			if b.Text != nil && *b.Text != "" {
				parts = append(parts, map[string]any{"type": "text", "text": *b.Text})
			}
		case "image":
			if !isNull(b.Source) {
				url, err := imageURL(b.Source, bf)
				if err != nil {
					return nil, err
				}
				parts = append(parts, map[string]any{"type": "image_url", "image_url": map[string]any{"url": url}})
			}
		case "thinking":
			if b.Thinking != nil {
				reasoning.WriteString(*b.Thinking)
				hasReasoning = true
			}
		case "redacted_thinking", "tool_reference":
		case "tool_use":
			call, err := toolUseCall(b, bf)
			if err != nil {
				return nil, err
			}
			msg.ToolCalls = append(msg.ToolCalls, call)
		case "tool_result":
			var err error
			if role == "user" {
				if out, err = appendToolResult(out, b, bf); err != nil {
					return nil, err
				}
				continue
			}
			text, err := assistantToolResult(b)
			if err != nil {
				return nil, err
			}
			parts = append(parts, map[string]any{"type": "text", "text": "Tool result: " + text})
		case "tool_addition", "tool_removal":
			return nil, &errNotMirrored{"a " + b.Type + " block"}
		default:
			return nil, &fieldError{bf(".type"), fmt.Errorf("%w: unknown content block type %q", ErrWrongType, b.Type)}
		}
	}
	if hasReasoning {
		r := reasoning.String()
		msg.Reasoning = &r
	}
	switch {
	case len(parts) == 1 && parts[0]["type"] == "text":
		msg.Content = mustString(parts[0]["text"].(string))
	case len(parts) > 0:
		b, err := json.Marshal(parts, json.Deterministic(true))
		if err != nil {
			return nil, fmt.Errorf("%w: encoding content: %v", ErrMalformedJSON, err)
		}
		msg.Content = b
	}
	if role == "user" && msg.Content == nil {
		// vLLM drops a user message left without content (one that only
		// carried tool results).
		return out, nil
	}
	return append(out, msg), nil
}

func imageURL(v jsontext.Value, field func(string) string) (string, error) {
	var src wireImageSource
	if v.Kind() != '{' || json.Unmarshal(v, &src, decodeOptions) != nil {
		return "", wrongType(field(".source"), "an object")
	}
	if src.Type == "url" {
		return src.URL, nil
	}
	mt := src.MediaType
	if mt == "" {
		mt = "image/jpeg"
	}
	return "data:" + mt + ";base64," + src.Data, nil
}

// toolUseCall converts a tool_use block; vLLM names a call without an id
// call_<unix seconds>.
func toolUseCall(b *wireBlock, field func(string) string) (chatToolCall, error) {
	id := ""
	if b.ID != nil {
		id = *b.ID
	}
	if id == "" {
		id = fmt.Sprintf("call_%d", time.Now().Unix())
	}
	name := ""
	if b.Name != nil {
		name = *b.Name
	}
	args := "{}"
	switch b.Input.Kind() {
	case 0, 'n':
	case '{':
		var err error
		if args, err = pythonDumps(b.Input); err != nil {
			return chatToolCall{}, wrongType(field(".input"), "an object")
		}
	default:
		return chatToolCall{}, wrongType(field(".input"), "an object")
	}
	return chatToolCall{ID: mustString(id), Type: "function",
		Function: chatFunctionCall{Name: name, Arguments: mustString(args)}}, nil
}

type wireResultItem struct {
	Type     string         `json:"type"`
	Text     *string        `json:"text"`
	Source   jsontext.Value `json:"source"`
	ToolName *string        `json:"tool_name"`
	Name     *string        `json:"name"`
}

// appendToolResult appends a user's tool_result as a tool message, then its
// images as a user message and its tool references as a second tool message.
func appendToolResult(out []*chatMessage, b *wireBlock, field func(string) string) ([]*chatMessage, error) {
	id := ""
	if b.ToolUseID != nil {
		id = *b.ToolUseID
	}
	var text string
	var images []map[string]any
	var refs []map[string]any
	switch b.Content.Kind() {
	case 0, 'n':
	case '"':
		_ = json.Unmarshal(b.Content, &text)
	case '[':
		var items []jsontext.Value
		if json.Unmarshal(b.Content, &items) != nil {
			return nil, wrongType(field(".content"), "a string or a list")
		}
		var texts []string
		for _, raw := range items {
			if raw.Kind() != '{' {
				continue
			}
			var it wireResultItem
			if json.Unmarshal(raw, &it, decodeOptions) != nil {
				continue
			}
			switch it.Type {
			case "text":
				t := ""
				if it.Text != nil {
					t = *it.Text
				}
				texts = append(texts, t)
			case "image":
				src := it.Source
				if isNull(src) {
					src = jsontext.Value("{}")
				}
				url, err := imageURL(src, field)
				if err != nil {
					return nil, err
				}
				if url != "" {
					images = append(images, map[string]any{"type": "image_url", "image_url": map[string]any{"url": url}})
				}
			case "tool_reference":
				name := it.ToolName
				if name == nil || *name == "" {
					name = it.Name
				}
				if name != nil && *name != "" {
					refs = append(refs, map[string]any{"type": "tool_reference", "name": *name})
				}
			}
		}
		text = strings.Join(texts, "\n")
	default:
		return nil, wrongType(field(".content"), "a string or a list")
	}
	out = append(out, &chatMessage{Role: "tool", ToolCallID: mustString(id), Content: mustString(text)})
	if len(images) > 0 {
		b, _ := json.Marshal(images)
		out = append(out, &chatMessage{Role: "user", Content: b})
	}
	if len(refs) > 0 {
		b, _ := json.Marshal(refs)
		out = append(out, &chatMessage{Role: "tool", ToolCallID: mustString(id), Content: b})
	}
	return out, nil
}

// assistantToolResult is the text of a tool_result outside a user message,
// Python's str() of its content; only string content is mirrored.
func assistantToolResult(b *wireBlock) (string, error) {
	switch b.Content.Kind() {
	case 0, 'n':
		return "", nil
	case '"':
		var s string
		_ = json.Unmarshal(b.Content, &s)
		return s, nil
	}
	return "", &errNotMirrored{"a tool_result with list content outside a user message"}
}

// anthropicTools converts tools to chat function tools (input_schema is the
// parameters). Nil when there are none.
func anthropicTools(v jsontext.Value) ([]byte, error) {
	if isNull(v) {
		return nil, nil
	}
	var tools []wireAnthropicTool
	if v.Kind() != '[' || json.Unmarshal(v, &tools, decodeOptions) != nil {
		return nil, wrongType("tools", "a list of tool objects")
	}
	out := make([]chatTool, 0, len(tools))
	for i, t := range tools {
		var name string
		if t.Name.Kind() != '"' || json.Unmarshal(t.Name, &name) != nil {
			return nil, wrongType(fmt.Sprintf("tools[%d].name", i), "a string")
		}
		if t.InputSchema.Kind() != '{' {
			return nil, wrongType(fmt.Sprintf("tools[%d].input_schema", i), "an object")
		}
		out = append(out, chatTool{Type: "function", Function: chatFunction{
			Name: name, Description: orNull(t.Description), Parameters: t.InputSchema, Strict: nonNull(t.Strict)}})
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("%w: encoding tools: %v", ErrMalformedJSON, err)
	}
	return b, nil
}
