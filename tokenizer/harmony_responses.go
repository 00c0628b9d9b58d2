package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
)

// HarmonyResponsesRequest is what vLLM's Harmony path reads of a
// /v1/responses request (the JSON of each field, empty when absent).
type HarmonyResponsesRequest struct {
	Input, Instructions, Tools json.RawMessage
	// ReasoningEffort is reasoning.effort, or empty.
	ReasoningEffort string
}

// harmonyBuiltinTools are the tool types vLLM serves itself (through its
// tool server) rather than showing them to the model as functions.
var harmonyBuiltinTools = map[string]bool{"web_search_preview": true, "code_interpreter": true, "container": true}

// RenderResponses renders a Responses request as vLLM (VLLMVersion) does
// for a Harmony model (OnlineRenderer._render_responses_with_harmony, with
// no stored conversation and no tool server): instructions, or a leading
// system or developer input message, become the developer message's
// instructions; function tools its namespace; reasoning.effort the system
// message's; input items become Harmony messages (function_call an
// assistant call to functions.NAME, function_call_output that tool's
// reply, a reasoning item's texts joined with newlines an analysis
// message, an assistant message a final one). Built-in tools (web search,
// code interpreter, container) are left out, as vLLM leaves them out without
// a tool server; an engine started with one (--tool-server) describes them
// in the system message, which the router does not mirror.
func (h *HarmonyChat) RenderResponses(r HarmonyResponsesRequest) (*HarmonyPrompt, error) {
	effort, err := harmonyEffort(r.ReasoningEffort)
	if err != nil {
		return nil, err
	}
	tools, err := harmonyResponsesTools(r.Tools)
	if err != nil {
		return nil, err
	}
	input, err := parseHJSON(orJSONNull(r.Input))
	if err != nil {
		return nil, err
	}
	var instructions *string
	if !isNull(r.Instructions) {
		ins, err := parseHJSON(r.Instructions)
		if err != nil {
			return nil, err
		}
		if !ins.isString() {
			return nil, fmt.Errorf("rendering harmony: instructions is not a string: %w", ErrRequest)
		}
		instructions = &ins.str
	}
	items := input.items
	if instructions == nil && input.isArray() && len(items) > 0 {
		if role, _ := items[0].get("role").text(); role == "system" || role == "developer" {
			instructions = flattenHarmony(items[0].get("content"))
			items = items[1:]
		}
	}
	msgs := harmonyPreamble(h.date(), effort, instructions, tools)
	switch {
	case input.isString():
		msgs = append(msgs, textMessage("user", "", input.str))
	case input.isArray():
		conv, err := harmonyResponsesItems(items)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, conv...)
	default:
		return nil, fmt.Errorf("rendering harmony: input is neither a string nor a list: %w", ErrRequest)
	}
	return harmonyRender(msgs), nil
}

func orJSONNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

// harmonyResponsesTools is get_developer_message's tool list: the function
// tools as ToolDescriptions.
func harmonyResponsesTools(raw json.RawMessage) ([]harmonyTool, error) {
	if isNull(raw) {
		return nil, nil
	}
	v, err := parseHJSON(raw)
	if err != nil {
		return nil, err
	}
	if !v.isArray() {
		return nil, fmt.Errorf("rendering harmony: tools is not a list: %w", ErrRequest)
	}
	var out []harmonyTool
	for i, t := range v.items {
		typ, _ := t.get("type").text()
		switch {
		case harmonyBuiltinTools[typ]:
			continue
		case typ != "function":
			return nil, fmt.Errorf("rendering harmony: tools[%d]: type %q is not supported: %w", i, typ, ErrRequest)
		}
		name, ok := t.get("name").text()
		if !ok {
			return nil, fmt.Errorf("rendering harmony: tools[%d] has no name: %w", i, ErrRequest)
		}
		desc, _ := t.get("description").text()
		p := t.get("parameters")
		if p != nil && p.kind == 'n' {
			p = nil
		}
		out = append(out, harmonyTool{name: name, description: desc, parameters: p})
	}
	return out, nil
}

// harmonyResponsesItems is response_input_to_harmony over the input items;
// a function_call_output's tool is the name of the latest function_call
// before it with its call_id.
func harmonyResponsesItems(items []*hjson) ([]harmonyMessage, error) {
	calls := map[string]string{}
	var out []harmonyMessage
	for i, it := range items {
		m, ok, err := harmonyResponsesItem(it, calls)
		if err != nil {
			return nil, fmt.Errorf("rendering harmony: input[%d]: %w", i, err)
		}
		if ok {
			out = append(out, m)
		}
	}
	return out, nil
}

func harmonyResponsesItem(it *hjson, calls map[string]string) (harmonyMessage, bool, error) {
	if it.kind != '{' {
		return harmonyMessage{}, false, fmt.Errorf("not an object: %w", ErrRequest)
	}
	typ, hasType := it.get("type").text()
	switch {
	case !hasType || typ == "message":
		return harmonyResponsesMessage(it)
	case typ == "function_call_output":
		id, _ := it.get("call_id").text()
		name, ok := calls[id]
		if !ok {
			return harmonyMessage{}, false, fmt.Errorf("no call message found for %q: %w", id, ErrRequest)
		}
		output, ok := it.get("output").text()
		if !ok {
			return harmonyMessage{}, false, fmt.Errorf("a function_call_output's output is not a string: %w", ErrUnsupported)
		}
		m := textMessage("tool", "commentary", output)
		m.name, m.recipient = "functions."+name, "assistant"
		return m, true, nil
	case typ == "reasoning":
		content := it.get("content")
		if !content.isArray() || len(content.items) == 0 {
			return harmonyMessage{}, false, nil
		}
		texts := make([]string, len(content.items))
		for i, c := range content.items {
			t, ok := c.get("text").text()
			if !ok {
				return harmonyMessage{}, false, fmt.Errorf("a reasoning content has no text: %w", ErrRequest)
			}
			texts[i] = t
		}
		return textMessage("assistant", "analysis", strings.Join(texts, "\n")), true, nil
	case typ == "function_call":
		name, _ := it.get("name").text()
		args, _ := it.get("arguments").text()
		if id, ok := it.get("call_id").text(); ok {
			calls[id] = name
		}
		m := textMessage("assistant", "commentary", args)
		m.recipient, m.contentType = "functions."+name, "json"
		return m, true, nil
	}
	return harmonyMessage{}, false, fmt.Errorf("unknown input type %q: %w", typ, ErrRequest)
}

func harmonyResponsesMessage(it *hjson) (harmonyMessage, bool, error) {
	role, _ := it.get("role").text()
	content := it.get("content")
	var m harmonyMessage
	switch {
	case role == "system" || role == "developer":
		text := flattenHarmony(content)
		if text == nil || *text == "" {
			return m, false, nil
		}
		return developerMessage(text, nil), true, nil
	case content.isString():
		m = textMessage(role, "", content.str)
	case content.isArray():
		texts := make([]string, 0, len(content.items))
		for _, p := range content.items {
			if p.kind != '{' {
				return m, false, fmt.Errorf("a content part is not an object: %w", ErrRequest)
			}
			t, _ := p.get("text").text()
			texts = append(texts, t)
		}
		m = textMessage(role, "", texts...)
	default:
		return m, false, fmt.Errorf("a message's content is neither a string nor a list: %w", ErrRequest)
	}
	if role == "assistant" {
		m.channel = "final"
	}
	return m, true, nil
}
