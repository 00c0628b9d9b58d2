package extproc

import (
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"fmt"

	"github.com/warmroute/warmroute/scorer"
)

// POST /v1/responses, converted to the chat request vLLM 0.33 renders for it
// (its construct_input_messages and construct_tool_dicts, non-Harmony path):
// instructions become a leading system message; a string input one user
// message; input items become chat messages, where a function_call, a
// reasoning item or an assistant message joins the assistant message before
// it when that message lacks the field; tools keep the function ones, in the
// chat tools form; reasoning.effort is the chat request's reasoning_effort; a
// last message or reasoning item still in progress is continued rather than
// answered (no generation prompt).
//
// A request with previous_response_id carries only the new turn: the engine
// prepends the stored conversation, which the router never sees, so such a
// request is routed by response-id affinity, not by its partial prompt.

const pathResponses = "/v1/responses"

type wireResponses struct {
	wireAgent
	Input              jsontext.Value `json:"input"`
	Instructions       jsontext.Value `json:"instructions"`
	Tools              jsontext.Value `json:"tools"`
	Reasoning          jsontext.Value `json:"reasoning"`
	Store              jsontext.Value `json:"store"`
	PreviousResponseID jsontext.Value `json:"previous_response_id"`
}

// wireAgent holds the fields both agent APIs share.
type wireAgent struct {
	Model              jsontext.Value `json:"model"`
	Stream             jsontext.Value `json:"stream"`
	ChatTemplateKwargs jsontext.Value `json:"chat_template_kwargs"`
	CacheSalt          jsontext.Value `json:"cache_salt"`
}

// decodeAgent decodes an agent API body into w (a struct embedding
// wireAgent, whose fields c points at) and reads the shared fields. A
// stream of either API always ends with its usage.
func decodeAgent(path string, body []byte, w any, c *wireAgent) (*scorer.Request, requestExtras, error) {
	var extra requestExtras
	if jsontext.Value(body).Kind() != '{' {
		return nil, extra, fmt.Errorf("%w: the body must be a JSON object", ErrMalformedJSON)
	}
	if err := json.Unmarshal(body, w, decodeOptions); err != nil {
		return nil, extra, fmt.Errorf("%w: %v", ErrMalformedJSON, err)
	}
	req := &scorer.Request{Kind: scorer.KindChat, Path: path, BodyBytes: len(body)}
	if err := readModel(c.Model, req); err != nil {
		return nil, extra, err
	}
	if err := optional(c.Stream, "stream", "a boolean", &req.Stream); err != nil {
		return nil, extra, err
	}
	extra.includeUsage = req.Stream
	if err := optional(c.CacheSalt, "cache_salt", "a string", &req.CacheSalt); err != nil {
		return nil, extra, err
	}
	var err error
	req.ChatTemplateKwargs, err = rawOfKind(c.ChatTemplateKwargs, '{', "chat_template_kwargs", "an object")
	return req, extra, err
}

type wireReasoningConfig struct {
	Effort jsontext.Value `json:"effort"`
}

// item is one Responses input item; only the fields the conversion reads.
type wireItem struct {
	Type      jsontext.Value `json:"type"`
	Role      jsontext.Value `json:"role"`
	Content   jsontext.Value `json:"content"`
	Status    jsontext.Value `json:"status"`
	CallID    jsontext.Value `json:"call_id"`
	Name      jsontext.Value `json:"name"`
	Namespace jsontext.Value `json:"namespace"`
	Arguments jsontext.Value `json:"arguments"`
	Input     jsontext.Value `json:"input"`
	Output    jsontext.Value `json:"output"`
	Summary   jsontext.Value `json:"summary"`
	Encrypted jsontext.Value `json:"encrypted_content"`
}

// chatMessage is one converted message. Raw, when set, is a message item
// passed through as sent (vLLM returns such items unchanged).
type chatMessage struct {
	Role       string         `json:"role"`
	Content    jsontext.Value `json:"content,omitzero"`
	Reasoning  *string        `json:"reasoning,omitempty"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID jsontext.Value `json:"tool_call_id,omitzero"`
	raw        jsontext.Value
}

type chatToolCall struct {
	ID       jsontext.Value   `json:"id"`
	Type     string           `json:"type"`
	Function chatFunctionCall `json:"function"`
}

type chatFunctionCall struct {
	Name      string         `json:"name"`
	Arguments jsontext.Value `json:"arguments"`
}

func parseResponses(path string, body []byte) (*scorer.Request, requestExtras, error) {
	var w wireResponses
	req, extra, err := decodeAgent(path, body, &w, &w.wireAgent)
	if err != nil {
		return nil, extra, err
	}
	if err := optional(w.PreviousResponseID, "previous_response_id", "a string", &req.PreviousResponseID); err != nil {
		return nil, extra, err
	}
	store := true // vLLM's default
	if err := optional(w.Store, "store", "a boolean", &store); err != nil {
		return nil, extra, err
	}
	extra.store = store
	msgs, cont, err := responsesMessages(w.Instructions, w.Input)
	if err != nil {
		return nil, extra, err
	}
	if err := setMessages(req, msgs); err != nil {
		return nil, extra, err
	}
	// A partial last item is continued: no generation prompt, the last
	// message left open (vLLM's continue_final_message).
	req.NoGenerationPrompt = cont
	req.ContinueFinalMessage = cont
	if req.Tools, err = responsesTools(w.Tools); err != nil {
		return nil, extra, err
	}
	if err := readReasoningEffort(w.Reasoning, req); err != nil {
		return nil, extra, err
	}
	keepHarmonyResponses(&w, req)
	return req, extra, nil
}

func readModel(v jsontext.Value, req *scorer.Request) error {
	if v.Kind() != '"' || json.Unmarshal(v, &req.Model) != nil || req.Model == "" {
		return &fieldError{"model", ErrMissingModel}
	}
	return nil
}

func readReasoningEffort(v jsontext.Value, req *scorer.Request) error {
	if isNull(v) {
		return nil
	}
	var r wireReasoningConfig
	if v.Kind() != '{' || json.Unmarshal(v, &r, decodeOptions) != nil {
		return wrongType("reasoning", "an object")
	}
	return optional(r.Effort, "reasoning.effort", "a string", &req.ReasoningEffort)
}

// setMessages encodes the converted messages and reads each back as a chat
// message, so the router sees them exactly as a chat request's.
func setMessages(req *scorer.Request, msgs []*chatMessage) error {
	if len(msgs) == 0 {
		return &fieldError{"input", ErrEmptyMessages}
	}
	req.Messages = make([]scorer.Message, len(msgs))
	for i, m := range msgs {
		raw := m.raw
		if raw == nil {
			b, err := json.Marshal(m)
			if err != nil {
				return fmt.Errorf("%w: encoding message %d: %v", ErrMalformedJSON, i, err)
			}
			raw = b
		}
		if err := readMessage(raw, i, &req.Messages[i]); err != nil {
			return err
		}
	}
	return nil
}

// responsesMessages converts instructions and input; cont reports that the
// last item is a partial assistant message to continue.
func responsesMessages(instructions, input jsontext.Value) (msgs []*chatMessage, cont bool, err error) {
	var sys string
	if err := optional(instructions, "instructions", "a string", &sys); err != nil {
		return nil, false, err
	}
	if sys != "" {
		msgs = append(msgs, &chatMessage{Role: "system", Content: mustString(sys)})
	}
	switch input.Kind() {
	case '"':
		var s string
		if json.Unmarshal(input, &s) != nil {
			return nil, false, wrongType("input", "a string or a list of items")
		}
		return append(msgs, &chatMessage{Role: "user", Content: mustString(s)}), false, nil
	case '[':
	case 0, 'n':
		return nil, false, &fieldError{"input", ErrEmptyMessages}
	default:
		return nil, false, wrongType("input", "a string or a list of items")
	}
	var items []jsontext.Value
	if json.Unmarshal(input, &items) != nil {
		return nil, false, wrongType("input", "a string or a list of items")
	}
	for i, raw := range items {
		var last *chatMessage
		if len(msgs) > 0 {
			last = msgs[len(msgs)-1]
		}
		m, c, err := convertItem(raw, i, last)
		if err != nil {
			return nil, false, err
		}
		cont = c
		if m != nil {
			msgs = append(msgs, m)
		}
	}
	return msgs, cont, nil
}

func mustString(s string) jsontext.Value {
	b, _ := json.Marshal(s) // a Go string always encodes
	return b
}

// convertItem converts one item. It returns nil when the item joined last
// (vLLM's prev_msg update) and whether the item is partial (to continue).
func convertItem(raw jsontext.Value, i int, last *chatMessage) (*chatMessage, bool, error) {
	field := func(s string) string { return fmt.Sprintf("input[%d]%s", i, s) }
	var it wireItem
	if raw.Kind() != '{' || json.Unmarshal(raw, &it, decodeOptions) != nil {
		return nil, false, wrongType(field(""), "an object")
	}
	var typ string
	if err := optional(it.Type, field(".type"), "a string", &typ); err != nil {
		return nil, false, err
	}
	prev := last
	if prev != nil && prev.Role != "assistant" {
		prev = nil
	}
	switch typ {
	case "function_call", "custom_tool_call":
		call, err := toolCallOf(&it, typ, field)
		if err != nil {
			return nil, false, err
		}
		if prev != nil && prev.raw == nil {
			prev.ToolCalls = append(prev.ToolCalls, call)
			return nil, false, nil
		}
		return &chatMessage{Role: "assistant", ToolCalls: []chatToolCall{call}}, false, nil
	case "reasoning":
		text, err := reasoningText(&it, field)
		if err != nil {
			return nil, false, err
		}
		partial := isPartial(it.Status)
		if prev != nil && prev.raw == nil && prev.Reasoning == nil {
			prev.Reasoning = &text
			return nil, partial, nil
		}
		return &chatMessage{Role: "assistant", Reasoning: &text}, partial, nil
	case "function_call_output", "custom_tool_call_output":
		return &chatMessage{Role: "tool", Content: nullIfAbsent(it.Output), ToolCallID: nullIfAbsent(it.CallID)}, false, nil
	}
	var role string
	if it.Role.Kind() == '"' {
		_ = json.Unmarshal(it.Role, &role)
	}
	if role == "" && isNull(it.Role) {
		return nil, false, &fieldError{field(".type"),
			fmt.Errorf("%w: unsupported input item type %q", ErrWrongType, typ)}
	}
	partial := (typ == "" || typ == "message") && isPartial(it.Status)
	if role == "assistant" {
		text, ok, err := assistantText(&it, typ, field)
		if err != nil {
			return nil, false, err
		}
		if ok {
			if prev != nil && prev.raw == nil && prev.Content == nil {
				prev.Content = mustString(text)
				return nil, partial, nil
			}
			return &chatMessage{Role: "assistant", Content: mustString(text)}, partial, nil
		}
	}
	// Any other item with a role is a chat message as sent.
	return &chatMessage{Role: role, raw: raw}, partial, nil
}

func nullIfAbsent(v jsontext.Value) jsontext.Value {
	if v.Kind() == 0 {
		return jsontext.Value("null")
	}
	return v
}

func isPartial(status jsontext.Value) bool {
	var s string
	if status.Kind() != '"' || json.Unmarshal(status, &s) != nil {
		return false
	}
	return s == "in_progress" || s == "incomplete"
}

// toolCallOf reads a function_call (call_id, name, arguments: strings; a
// namespace flattens the name as namespace__name) or a custom_tool_call
// (its input wrapped as {"input": ...}, vLLM's function shim).
func toolCallOf(it *wireItem, typ string, field func(string) string) (chatToolCall, error) {
	var name string
	if it.CallID.Kind() != '"' {
		return chatToolCall{}, wrongType(field(".call_id"), "a string")
	}
	if it.Name.Kind() != '"' || json.Unmarshal(it.Name, &name) != nil {
		return chatToolCall{}, wrongType(field(".name"), "a string")
	}
	call := chatToolCall{ID: it.CallID, Type: "function"}
	if typ == "custom_tool_call" {
		var in string
		if err := optional(it.Input, field(".input"), "a string", &in); err != nil {
			return chatToolCall{}, err
		}
		args, _ := json.Marshal(map[string]string{"input": in})
		call.Function = chatFunctionCall{Name: name, Arguments: mustString(string(args))}
		return call, nil
	}
	if it.Arguments.Kind() != '"' {
		return chatToolCall{}, wrongType(field(".arguments"), "a string")
	}
	var ns string
	if err := optional(it.Namespace, field(".namespace"), "a string", &ns); err != nil {
		return chatToolCall{}, err
	}
	if ns != "" {
		name = ns + "__" + name
	}
	call.Function = chatFunctionCall{Name: name, Arguments: it.Arguments}
	return call, nil
}

type wireTextPart struct {
	Text jsontext.Value `json:"text"`
}

// reasoningText is a reasoning item's first content text, else its first
// summary text; encrypted content is refused, as vLLM does.
func reasoningText(it *wireItem, field func(string) string) (string, error) {
	if !isNull(it.Encrypted) {
		return "", &fieldError{field(".encrypted_content"),
			fmt.Errorf("%w: encrypted reasoning content is not supported", ErrWrongType)}
	}
	if it.Summary.Kind() != '[' {
		return "", wrongType(field(".summary"), "a list")
	}
	for _, src := range []struct {
		v    jsontext.Value
		name string
	}{{it.Content, ".content"}, {it.Summary, ".summary"}} {
		if isNull(src.v) {
			continue
		}
		var parts []wireTextPart
		if src.v.Kind() != '[' || json.Unmarshal(src.v, &parts, decodeOptions) != nil {
			return "", wrongType(field(src.name), "a list of text parts")
		}
		if len(parts) == 0 {
			continue
		}
		var text string
		if parts[0].Text.Kind() != '"' || json.Unmarshal(parts[0].Text, &text) != nil {
			return "", wrongType(field(src.name+"[0].text"), "a string")
		}
		return text, nil
	}
	return "", nil
}

// assistantText is an assistant message item's text: a string content, or
// its first part's text. ok is false when it has none (the item is then
// passed through as sent, as vLLM does).
func assistantText(it *wireItem, typ string, field func(string) string) (string, bool, error) {
	switch it.Content.Kind() {
	case '"':
		var s string
		if json.Unmarshal(it.Content, &s) != nil {
			return "", false, wrongType(field(".content"), "a string or a list of parts")
		}
		return s, true, nil
	case '[':
		var parts []wireTextPart
		if json.Unmarshal(it.Content, &parts, decodeOptions) != nil {
			return "", false, wrongType(field(".content"), "a list of output_text parts")
		}
		if len(parts) == 0 {
			if typ == "message" {
				// vLLM reads content[0] of an output message.
				return "", false, wrongType(field(".content"), "a non-empty list")
			}
			return "", false, nil
		}
		var s string
		if parts[0].Text.Kind() != '"' || json.Unmarshal(parts[0].Text, &s) != nil {
			return "", false, wrongType(field(".content[0].text"), "a string")
		}
		return s, true, nil
	}
	return "", false, nil
}

// wireResponsesTool is a Responses tool: function tools are flat
// ({"type":"function","name":...,"parameters":...}); namespace tools hold
// function tools.
type wireResponsesTool struct {
	Type        jsontext.Value `json:"type"`
	Name        jsontext.Value `json:"name"`
	Description jsontext.Value `json:"description"`
	Parameters  jsontext.Value `json:"parameters"`
	Strict      jsontext.Value `json:"strict"`
	Tools       jsontext.Value `json:"tools"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

// chatFunction is a tool's function as vLLM's FunctionDefinition dumps it
// for the template: description and parameters always (null when absent),
// strict and defer_loading (Anthropic tools only) only when set.
type chatFunction struct {
	Name         string         `json:"name"`
	Description  jsontext.Value `json:"description"`
	Parameters   jsontext.Value `json:"parameters"`
	Strict       jsontext.Value `json:"strict,omitzero"`
	DeferLoading jsontext.Value `json:"defer_loading,omitzero"`
}

// responsesTools converts the function tools (and namespace tools'
// functions, flattened) to the chat tools form; other tool types are never
// shown to the model. Nil when there are none.
func responsesTools(v jsontext.Value) ([]byte, error) {
	if isNull(v) {
		return nil, nil
	}
	var tools []wireResponsesTool
	if v.Kind() != '[' || json.Unmarshal(v, &tools, decodeOptions) != nil {
		return nil, wrongType("tools", "a list of tool objects")
	}
	var out []chatTool
	for i := range tools {
		var err error
		if out, err = appendFunctionTool(out, &tools[i], "", fmt.Sprintf("tools[%d]", i)); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("%w: encoding tools: %v", ErrMalformedJSON, err)
	}
	return b, nil
}

func appendFunctionTool(out []chatTool, t *wireResponsesTool, ns, field string) ([]chatTool, error) {
	var typ, name string
	if t.Type.Kind() != '"' || json.Unmarshal(t.Type, &typ) != nil {
		return nil, wrongType(field+".type", "a string")
	}
	switch typ {
	case "function":
	case "namespace":
		if ns != "" {
			return out, nil
		}
		if t.Name.Kind() != '"' || json.Unmarshal(t.Name, &name) != nil {
			return nil, wrongType(field+".name", "a string")
		}
		var inner []wireResponsesTool
		if t.Tools.Kind() != '[' || json.Unmarshal(t.Tools, &inner, decodeOptions) != nil {
			return nil, wrongType(field+".tools", "a list of tool objects")
		}
		for j := range inner {
			var err error
			if out, err = appendFunctionTool(out, &inner[j], name, fmt.Sprintf("%s.tools[%d]", field, j)); err != nil {
				return nil, err
			}
		}
		return out, nil
	default:
		return out, nil
	}
	if t.Name.Kind() != '"' || json.Unmarshal(t.Name, &name) != nil {
		return nil, wrongType(field+".name", "a string")
	}
	if ns != "" {
		name = ns + "__" + name
	}
	return append(out, chatTool{Type: "function", Function: chatFunction{
		Name: name, Description: orNull(t.Description), Parameters: orNull(t.Parameters), Strict: nonNull(t.Strict)}}), nil
}

func nonNull(v jsontext.Value) jsontext.Value {
	if isNull(v) {
		return nil
	}
	return v
}

// orNull is v, or JSON null when v is absent.
func orNull(v jsontext.Value) jsontext.Value {
	if v.Kind() == 0 {
		return jsontext.Value("null")
	}
	return v
}
