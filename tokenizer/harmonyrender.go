package tokenizer

import (
	"fmt"
	"time"
)

// HarmonyChat renders GPT-OSS chat requests in the Harmony format as vLLM
// (VLLMVersion) builds them with openai_harmony: a system message (model
// identity, knowledge cutoff, the conversation's start date, reasoning
// effort, channels), a developer message with the leading system or
// developer message's text as instructions and the tools as a TypeScript
// namespace, then the conversation, ending with the assistant's header.
// Written by hand because no Go library renders Harmony; checked against
// vLLM's own rendering for every shape in testdata/vllm_golden.json. Safe
// for concurrent use.
type HarmonyChat struct {
	date func() string
}

// NewHarmonyChat renders with the start date the engine uses: vLLM takes
// VLLM_SYSTEM_START_DATE or its clock's local date; date returns it as
// YYYY-MM-DD.
func NewHarmonyChat(date func() string) *HarmonyChat { return &HarmonyChat{date: date} }

// UTCDate is today's date in UTC, the engine's date when it runs in UTC.
func UTCDate() string { return time.Now().UTC().Format(time.DateOnly) }

// Render returns the prompt (vLLM's _make_request_with_harmony):
// add_generation_prompt and continue_final_message do not apply, as vLLM
// always ends a Harmony prompt with the assistant's header.
func (h *HarmonyChat) Render(req ChatRequest) (*HarmonyPrompt, error) {
	msgs, err := parseHJSON(req.Messages)
	if err != nil {
		return nil, err
	}
	if msgs.kind != '[' {
		return nil, fmt.Errorf("decoding messages: not a list: %w", ErrMalformed)
	}
	if req.ContinueFinalMessage && req.GenerationPromptSent {
		return nil, fmt.Errorf("rendering harmony: continue_final_message and add_generation_prompt are both set: %w", ErrRequest)
	}
	effort, err := harmonyEffort(req.ReasoningEffort)
	if err != nil {
		return nil, err
	}
	var tools []harmonyTool
	if !isNull(req.Tools) {
		t, err := jsonToValue(req.Tools)
		if err != nil {
			return nil, err
		}
		if _, err = normalizeTools(t); err != nil {
			return nil, err
		}
		if tools, err = harmonyChatTools(req.Tools); err != nil {
			return nil, err
		}
		if len(tools) == 0 {
			return nil, fmt.Errorf("rendering harmony: tools is an empty list: %w", ErrRequest)
		}
	}
	items := msgs.items
	var instructions *string
	if len(items) > 0 {
		if r, _ := items[0].get("role").text(); r == "system" || r == "developer" {
			instructions = flattenHarmony(items[0].get("content"))
			items = items[1:]
		}
	}
	out := harmonyPreamble(h.date(), effort, instructions, tools)
	conv, err := harmonyChatMessages(items)
	if err != nil {
		return nil, err
	}
	return harmonyRender(append(out, conv...)), nil
}

// harmonyEffort is the system message's reasoning effort: Harmony's
// default, medium, when the request sets none; "none" and anything else
// Harmony lacks is refused, as vLLM refuses it.
func harmonyEffort(e string) (string, error) {
	switch e {
	case "":
		return "medium", nil
	case "low", "medium", "high":
		return e, nil
	}
	return "", fmt.Errorf("rendering harmony: reasoning_effort %q: %w", e, ErrRequest)
}

// harmonyChatMessages is vLLM's parse_chat_inputs_to_harmony_messages.
func harmonyChatMessages(items []*hjson) ([]harmonyMessage, error) {
	names := map[string]string{}
	for i, m := range items {
		if m.kind != '{' {
			return nil, fmt.Errorf("rendering harmony: messages[%d]: not an object: %w", i, ErrRequest)
		}
		calls := m.get("tool_calls")
		if calls != nil && calls.kind != '[' {
			return nil, fmt.Errorf("rendering harmony: messages[%d]: tool_calls is not a list: %w", i, ErrUnsupported)
		}
		for _, c := range calls.itemsOrNil() {
			if err := checkHarmonyCall(c); err != nil {
				return nil, fmt.Errorf("rendering harmony: messages[%d]: %w: %w", i, ErrRequest, err)
			}
			id, _ := c.get("id").text()
			names[id], _ = c.get("function").get("name").text()
		}
	}
	var out []harmonyMessage
	for i, m := range items {
		ms, err := harmonyChatMessage(m, names)
		if err != nil {
			return nil, fmt.Errorf("rendering harmony: messages[%d]: %w", i, err)
		}
		out = append(out, ms...)
	}
	return out, nil
}

func (v *hjson) itemsOrNil() []*hjson {
	if v.isArray() {
		return v.items
	}
	return nil
}

// checkHarmonyCall rejects a tool call vLLM's request model rejects: its
// function's name and arguments must be strings.
func checkHarmonyCall(c *hjson) error {
	fn := c.get("function")
	if fn == nil || fn.kind != '{' {
		return fmt.Errorf("a tool call has no function")
	}
	if !fn.get("name").isString() || !fn.get("arguments").isString() {
		return fmt.Errorf("a tool call's name or arguments is not a string")
	}
	return nil
}

// harmonyChatMessage is vLLM's parse_chat_input_to_harmony_message.
func harmonyChatMessage(m *hjson, names map[string]string) ([]harmonyMessage, error) {
	role, _ := m.get("role").text()
	reasoning, err := harmonyReasoning(m, role)
	if err != nil {
		return nil, err
	}
	var out []harmonyMessage
	if calls := m.get("tool_calls").itemsOrNil(); role == "assistant" && len(calls) > 0 {
		if text := flattenHarmony(m.get("content")); text != nil && *text != "" {
			out = append(out, textMessage("assistant", "commentary", *text))
		}
		if reasoning != "" {
			out = append(out, textMessage("assistant", "analysis", reasoning))
		}
		for _, c := range calls {
			fn := c.get("function")
			name, _ := fn.get("name").text()
			args, _ := fn.get("arguments").text()
			msg := textMessage("assistant", "commentary", args)
			msg.recipient, msg.contentType = "functions."+name, "json"
			out = append(out, msg)
		}
		return out, nil
	}
	if role == "tool" {
		id, _ := m.get("tool_call_id").text()
		body := ""
		if text := flattenHarmony(m.get("content")); text != nil {
			body = *text
		}
		msg := textMessage("tool", "commentary", body)
		msg.name, msg.recipient = "functions."+names[id], "assistant"
		return []harmonyMessage{msg}, nil
	}
	if role == "assistant" && reasoning != "" {
		out = append(out, textMessage("assistant", "analysis", reasoning))
	}
	texts, err := harmonyContents(m.get("content"))
	if err != nil {
		return nil, err
	}
	switch role {
	case "assistant":
		if texts[0] != "" {
			out = append(out, textMessage("assistant", "final", texts...))
		}
	case "system", "developer":
		if text := flattenHarmony(m.get("content")); text != nil {
			out = append(out, developerMessage(text, nil))
		}
	default:
		out = append(out, textMessage(role, "", texts...))
	}
	return out, nil
}

// harmonyReasoning is an assistant message's reasoning text; vLLM reads
// only "reasoning" (reasoning_content is not Harmony's).
func harmonyReasoning(m *hjson, role string) (string, error) {
	r := m.get("reasoning")
	switch {
	case role != "assistant" || r == nil || r.kind == 'n':
		return "", nil
	case r.isString():
		return r.str, nil
	}
	return "", fmt.Errorf("reasoning is not a string: %w", ErrUnsupported)
}

// flattenHarmony is vLLM's flatten_input_text_content: a string as it is, a
// list's texts joined with nothing, nil for no text.
func flattenHarmony(c *hjson) *string {
	switch {
	case c.isString():
		s := c.str
		return &s
	case !c.isArray():
		return nil
	}
	var texts []string
	found := false
	for _, p := range c.items {
		switch {
		case p.isString():
			texts, found = append(texts, p.str), true
		case p.kind == '{':
			if t, ok := p.get("text").text(); ok {
				texts, found = append(texts, t), true
			}
		}
	}
	if !found {
		return nil
	}
	s := ""
	for _, t := range texts {
		s += t
	}
	return &s
}

// harmonyContents is the TextContents vLLM gives a plain message: a string
// (null or empty: "") as one, each part's text ("" without one) for a
// list; a bare string in the list is an error in vLLM. Never empty.
func harmonyContents(c *hjson) ([]string, error) {
	switch {
	case c.isString():
		return []string{c.str}, nil
	case !c.isArray() || len(c.items) == 0:
		return []string{""}, nil
	}
	out := make([]string, 0, len(c.items))
	for _, p := range c.items {
		if p.kind != '{' {
			return nil, fmt.Errorf("a content part is not an object: %w", ErrRequest)
		}
		t, _ := p.get("text").text()
		out = append(out, t)
	}
	return out, nil
}
