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
//   - an assistant's tool_result becomes a text part "Tool result: " and
//     Python's str() of its content (pyReprJSON for list content);
//   - tools become chat function tools, with the system messages'
//     tool_addition / tool_removal blocks applied (anthropic_tools.go);
//   - thinking.type "disabled" is reasoning_effort "none", and
//     output_config.effort sets reasoning_effort otherwise.
//
// vLLM merges inline system messages into the leading one when the chat
// template rejects a system message after the first (its probe renders
// system, user, system, user); the request carries both forms and the
// renderer picks by the same probe (scorer.Request.SystemFirstMessages).

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
	Tool      jsontext.Value `json:"tool"`
}

type wireImageSource struct {
	Type      string `json:"type"`
	URL       string `json:"url"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

type wireThinking struct {
	Type string `json:"type"`
}

type wireOutputConfig struct {
	Effort *string `json:"effort"`
}

func parseMessages(path string, body []byte) (*scorer.Request, requestExtras, error) {
	var w wireAnthropic
	req, extra, err := decodeAgent(path, body, &w, &w.wireAgent)
	if err != nil {
		return nil, extra, err
	}
	conv, err := anthropicMessages(w.System, w.Messages)
	if err != nil {
		return nil, extra, err
	}
	if err := setMessages(req, conv.out); err != nil {
		return nil, extra, err
	}
	if merged := conv.merged(); merged != nil {
		alt := &scorer.Request{}
		if err := setMessages(alt, merged); err != nil {
			return nil, extra, err
		}
		req.SystemFirstMessages = alt.Messages
	}
	if req.Tools, err = anthropicTools(w.Tools, conv.changes); err != nil {
		return nil, extra, err
	}
	return req, extra, readAnthropicEffort(w.Thinking, w.OutputConfig, req)
}

// readAnthropicEffort applies output_config.effort, then thinking: disabled
// thinking is effort "none", which the renderer replaces with "low" for a
// template that ignores "none" (scorer.Request.DisabledThinking), as vLLM's
// probe of the template does.
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
		req.DisabledThinking = true
	}
	return nil
}

// anthropicConv is one request's conversion: the chat messages with inline
// system messages in place, the tool changes found, and what a template that
// wants system messages first gets instead (vLLM's merge_inline_system).
type anthropicConv struct {
	out      []*chatMessage
	changes  []toolChange
	inline   []string // inline system messages' text, in order
	nonSys   []*chatMessage
	topLevel string
}

func anthropicMessages(system, messages jsontext.Value) (*anthropicConv, error) {
	c := &anthropicConv{}
	sys, err := systemText(system)
	if err != nil {
		return nil, err
	}
	c.topLevel = sys
	if sys != "" {
		c.out = append(c.out, &chatMessage{Role: "system", Content: mustString(sys)})
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
		if err := c.message(&raw[i], i); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// merged is the conversation vLLM builds for a template that rejects a
// system message after the first: the top-level system text and every
// inline system message's text joined into one leading system message. Nil
// when the request has no inline system message (both forms are the same).
func (c *anthropicConv) merged() []*chatMessage {
	systems := len(c.inline)
	if c.topLevel != "" {
		systems++
	}
	if systems == 0 || systems == 1 && c.out[0].Role == "system" {
		return nil // a lone leading system message: merging changes nothing
	}
	text := c.topLevel + strings.Join(c.inline, "")
	return append([]*chatMessage{{Role: "system", Content: mustString(text)}}, c.nonSys...)
}

func (c *anthropicConv) add(m *chatMessage) {
	c.out = append(c.out, m)
	c.nonSys = append(c.nonSys, m)
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

func (c *anthropicConv) message(m *wireAnthropicMessage, i int) error {
	field := func(s string) string { return fmt.Sprintf("messages[%d]%s", i, s) }
	var role string
	if m.Role.Kind() != '"' || json.Unmarshal(m.Role, &role) != nil || role == "" {
		return wrongType(field(".role"), "a non-empty string")
	}
	if m.Content.Kind() == '"' {
		var s string
		if json.Unmarshal(m.Content, &s) != nil {
			return wrongType(field(".content"), "a string or a list of blocks")
		}
		if role == "system" {
			c.system(s, strings.HasPrefix(s, billingHeader))
			return nil
		}
		c.add(&chatMessage{Role: role, Content: m.Content})
		return nil
	}
	var blocks []wireBlock
	if m.Content.Kind() != '[' || json.Unmarshal(m.Content, &blocks, decodeOptions) != nil {
		return wrongType(field(".content"), "a string or a list of blocks")
	}
	if role == "system" {
		return c.systemBlocks(blocks, field)
	}
	msg, err := c.blocks(role, blocks, field)
	if err != nil || (role == "user" && msg.Content == nil) {
		// vLLM drops a user message left without content (one that only
		// carried tool results).
		return err
	}
	c.add(msg)
	return nil
}

// system adds an inline system message's text, unless it is empty or a
// billing header.
func (c *anthropicConv) system(text string, billing bool) {
	if text == "" || billing {
		return
	}
	c.out = append(c.out, &chatMessage{Role: "system", Content: mustString(text)})
	c.inline = append(c.inline, text)
}

// systemBlocks reads a system message's blocks: its text, and its tool
// changes (the only messages vLLM allows them in).
func (c *anthropicConv) systemBlocks(blocks []wireBlock, field func(string) string) error {
	for j := range blocks {
		b := &blocks[j]
		if b.Type != "tool_addition" && b.Type != "tool_removal" {
			continue
		}
		ch, err := readToolChange(b, func(s string) string { return field(fmt.Sprintf(".content[%d]%s", j, s)) })
		if err != nil {
			return err
		}
		c.changes = append(c.changes, ch)
	}
	c.system(joinText(blocks), false)
	return nil
}

// blocks converts a user or assistant message's content blocks. User tool
// results are appended to the conversation first, as vLLM does.
func (c *anthropicConv) blocks(role string, blocks []wireBlock, field func(string) string) (*chatMessage, error) {
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
			if role == "user" {
				if err := c.toolResult(b, bf); err != nil {
					return nil, err
				}
				continue
			}
			text, err := assistantToolResult(b, bf)
			if err != nil {
				return nil, err
			}
			parts = append(parts, map[string]any{"type": "text", "text": "Tool result: " + text})
		case "tool_addition", "tool_removal":
			return nil, invalid(bf(".type"), b.Type+` blocks are only allowed in messages with role "system"`)
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
	return msg, nil
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
func (c *anthropicConv) toolResult(b *wireBlock, field func(string) string) error {
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
			return wrongType(field(".content"), "a string or a list")
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
					return err
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
		return wrongType(field(".content"), "a string or a list")
	}
	c.add(&chatMessage{Role: "tool", ToolCallID: mustString(id), Content: mustString(text)})
	if len(images) > 0 {
		b, _ := json.Marshal(images)
		c.add(&chatMessage{Role: "user", Content: b})
	}
	if len(refs) > 0 {
		b, _ := json.Marshal(refs)
		c.add(&chatMessage{Role: "tool", ToolCallID: mustString(id), Content: b})
	}
	return nil
}

// assistantToolResult is the text of a tool_result outside a user message:
// Python's str() of its content ("" when empty), as vLLM writes it.
func assistantToolResult(b *wireBlock, field func(string) string) (string, error) {
	switch b.Content.Kind() {
	case 0, 'n':
		return "", nil
	case '"':
		var s string
		_ = json.Unmarshal(b.Content, &s)
		return s, nil
	case '[':
		var items []jsontext.Value
		if json.Unmarshal(b.Content, &items) != nil {
			return "", wrongType(field(".content"), "a string or a list of objects")
		}
		if len(items) == 0 {
			return "", nil
		}
		for _, it := range items {
			if it.Kind() != '{' {
				return "", wrongType(field(".content"), "a string or a list of objects")
			}
		}
		s, err := pyReprJSON(b.Content)
		if err != nil {
			return "", wrongType(field(".content"), "a string or a list of objects")
		}
		return s, nil
	}
	return "", wrongType(field(".content"), "a string or a list of objects")
}
