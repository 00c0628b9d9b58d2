package tokenizer

import (
	"fmt"
	"strings"
	"time"

	"github.com/ardanlabs/jinja"
)

// HarmonyChat renders GPT-OSS chat requests in the Harmony format as vLLM
// (VLLMVersion) builds them with openai_harmony: a system message (model
// identity, knowledge cutoff, the conversation's start date, reasoning
// effort, channels), a developer message with the leading system or
// developer message's text as instructions and the tools as a TypeScript
// namespace, then the conversation, ending with the assistant's header.
// Written by hand because no Go library renders Harmony; it covers the
// shapes listed in the README, and returns ErrUnsupported for tool schemas
// it cannot print exactly. Safe for concurrent use.
type HarmonyChat struct {
	date func() string
}

// NewHarmonyChat renders with the start date the engine uses: vLLM takes
// VLLM_SYSTEM_START_DATE or its clock's local date; date returns it as
// YYYY-MM-DD.
func NewHarmonyChat(date func() string) *HarmonyChat { return &HarmonyChat{date: date} }

// UTCDate is today's date in UTC, the engine's date when it runs in UTC.
func UTCDate() string { return time.Now().UTC().Format(time.DateOnly) }

// harmonyEfforts are the reasoning efforts Harmony accepts.
var harmonyEfforts = map[string]string{"low": "low", "medium": "medium", "high": "high"}

// Render returns the prompt text; its special tokens are Harmony's.
// add_generation_prompt and continue_final_message do not apply: vLLM always
// ends a Harmony prompt with the assistant's header.
func (h *HarmonyChat) Render(req ChatRequest) (string, error) {
	msgs, err := jsonToValue(req.Messages)
	if err != nil {
		return "", err
	}
	if !msgs.IsList() {
		return "", fmt.Errorf("decoding messages: not a list: %w", ErrMalformed)
	}
	effort := "medium"
	if req.ReasoningEffort != "" {
		if effort = harmonyEfforts[req.ReasoningEffort]; effort == "" {
			return "", fmt.Errorf("rendering harmony: reasoning_effort %q: %w", req.ReasoningEffort, ErrRequest)
		}
	}
	var tools []jinja.Value
	if !isNull(req.Tools) {
		t, err := jsonToValue(req.Tools)
		if err != nil {
			return "", err
		}
		if t, err = normalizeTools(t); err != nil {
			return "", err
		}
		tools = t.AsList().Items
	}
	items := msgs.AsList().Items
	var instructions *string
	if len(items) > 0 && (roleOf(items[0]) == "system" || roleOf(items[0]) == "developer") {
		instructions, _ = flattenHarmony(content(items[0]))
		items = items[1:]
	}
	var b strings.Builder
	h.writeSystem(&b, effort, len(tools) > 0)
	if err := writeDeveloper(&b, instructions, tools); err != nil {
		return "", err
	}
	body, err := harmonyConversation(items)
	if err != nil {
		return "", err
	}
	b.WriteString(body)
	b.WriteString("<|start|>assistant")
	return b.String(), nil
}

func (h *HarmonyChat) writeSystem(b *strings.Builder, effort string, tools bool) {
	b.WriteString("<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\n" +
		"Knowledge cutoff: 2024-06\nCurrent date: " + h.date() + "\n\nReasoning: " + effort +
		"\n\n# Valid channels: analysis, commentary, final. Channel must be included for every message.")
	if tools {
		b.WriteString("\nCalls to these tools must go to the commentary channel: 'functions'.")
	}
	b.WriteString("<|end|>")
}

func writeDeveloper(b *strings.Builder, instructions *string, tools []jinja.Value) error {
	hasInstr := instructions != nil && *instructions != ""
	if !hasInstr && len(tools) == 0 {
		return nil
	}
	b.WriteString("<|start|>developer<|message|>")
	if hasInstr {
		b.WriteString("# Instructions\n\n" + *instructions)
	}
	if len(tools) > 0 {
		if hasInstr {
			b.WriteString("\n\n")
		}
		ns, err := harmonyTools(tools)
		if err != nil {
			return err
		}
		b.WriteString(ns)
	}
	b.WriteString("<|end|>")
	return nil
}

// harmonyMsg is one rendered Harmony message, kept apart until the analysis
// messages before the last final answer are dropped, as vLLM drops them.
type harmonyMsg struct {
	text     string
	analysis bool
	final    bool
}

func harmonyConversation(items []jinja.Value) (string, error) {
	names := map[string]string{}
	for i, m := range items {
		for _, c := range toolCalls(m) {
			if err := checkCall(c); err != nil {
				return "", fmt.Errorf("rendering harmony: messages[%d]: %w: %w", i, ErrRequest, err)
			}
			id, name := callIDName(c)
			names[id] = name
		}
	}
	var out []harmonyMsg
	for i, m := range items {
		ms, err := harmonyMessages(m, names)
		if err != nil {
			return "", fmt.Errorf("rendering harmony: messages[%d]: %w", i, err)
		}
		out = append(out, ms...)
	}
	last := -1
	for i, m := range out {
		if m.final {
			last = i
		}
	}
	var b strings.Builder
	for i, m := range out {
		if !(m.analysis && i < last) {
			b.WriteString(m.text)
		}
	}
	return b.String(), nil
}

func harmonyMessages(m jinja.Value, names map[string]string) ([]harmonyMsg, error) {
	if !m.IsDict() {
		return nil, fmt.Errorf("not an object: %w", ErrRequest)
	}
	role := roleOf(m)
	reasoning := stringField(m, "reasoning")
	var out []harmonyMsg
	if calls := toolCalls(m); role == "assistant" && len(calls) > 0 {
		if text, _ := flattenHarmony(content(m)); text != nil && *text != "" {
			out = append(out, harmonyMsg{text: "<|start|>assistant<|channel|>commentary<|message|>" + *text + "<|end|>"})
		}
		if reasoning != "" {
			out = append(out, analysisMsg(reasoning))
		}
		for _, c := range calls {
			_, name := callIDName(c)
			args := ""
			if fn, ok := c.AsDict().Get("function"); ok && fn.IsDict() {
				if a, ok := fn.AsDict().Get("arguments"); ok && a.IsString() {
					args = a.AsString()
				}
			}
			out = append(out, harmonyMsg{text: "<|start|>assistant to=functions." + name +
				"<|channel|>commentary json<|message|>" + args + "<|call|>"})
		}
		return out, nil
	}
	if role == "tool" {
		id := stringField(m, "tool_call_id")
		text, _ := flattenHarmony(content(m))
		body := ""
		if text != nil {
			body = *text
		}
		return []harmonyMsg{{text: "<|start|>functions." + names[id] + " to=assistant<|channel|>commentary<|message|>" + body + "<|end|>"}}, nil
	}
	if role == "assistant" && reasoning != "" {
		out = append(out, analysisMsg(reasoning))
	}
	texts, err := harmonyContents(content(m))
	if err != nil {
		return nil, err
	}
	switch {
	case role == "assistant":
		if len(texts) > 0 && texts[0] != "" {
			out = append(out, harmonyMsg{text: "<|start|>assistant<|channel|>final<|message|>" + strings.Join(texts, "") + "<|end|>", final: true})
		}
	case role == "system" || role == "developer":
		if text, _ := flattenHarmony(content(m)); text != nil {
			out = append(out, harmonyMsg{text: "<|start|>developer<|message|># Instructions\n\n" + *text + "<|end|>"})
		}
	default:
		out = append(out, harmonyMsg{text: "<|start|>" + role + "<|message|>" + strings.Join(texts, "") + "<|end|>"})
	}
	return out, nil
}

func analysisMsg(text string) harmonyMsg {
	return harmonyMsg{text: "<|start|>assistant<|channel|>analysis<|message|>" + text + "<|end|>", analysis: true}
}

func content(m jinja.Value) jinja.Value {
	c, _ := m.AsDict().Get("content")
	return c
}

func stringField(m jinja.Value, key string) string {
	v, _ := m.AsDict().Get(key)
	if v.IsString() {
		return v.AsString()
	}
	return ""
}

func toolCalls(m jinja.Value) []jinja.Value {
	if !m.IsDict() {
		return nil
	}
	c, _ := m.AsDict().Get("tool_calls")
	if !c.IsList() {
		return nil
	}
	var out []jinja.Value
	for _, v := range c.AsList().Items {
		if v.IsDict() {
			out = append(out, v)
		}
	}
	return out
}

// checkCall rejects a tool call vLLM's request model rejects: its function's
// name and arguments must be strings.
func checkCall(c jinja.Value) error {
	fn, _ := c.AsDict().Get("function")
	if !fn.IsDict() {
		return fmt.Errorf("a tool call has no function")
	}
	name, _ := fn.AsDict().Get("name")
	args, _ := fn.AsDict().Get("arguments")
	if !name.IsString() || !args.IsString() {
		return fmt.Errorf("a tool call's name or arguments is not a string")
	}
	return nil
}

func callIDName(c jinja.Value) (id, name string) {
	id = stringField(c, "id")
	if fn, ok := c.AsDict().Get("function"); ok && fn.IsDict() {
		name = stringField(fn, "name")
	}
	return id, name
}

// flattenHarmony is vLLM's flatten_input_text_content: a string as it is, a
// list's texts joined with nothing, nil for no text.
func flattenHarmony(c jinja.Value) (*string, error) {
	switch {
	case c.IsString():
		s := c.AsString()
		return &s, nil
	case !c.IsList():
		return nil, nil
	}
	var texts []string
	for _, p := range c.AsList().Items {
		switch {
		case p.IsString():
			texts = append(texts, p.AsString())
		case p.IsDict():
			if t, ok := p.AsDict().Get("text"); ok && t.IsString() {
				texts = append(texts, t.AsString())
			}
		}
	}
	if len(texts) == 0 {
		return nil, nil
	}
	s := strings.Join(texts, "")
	return &s, nil
}

// harmonyContents is the text contents vLLM gives a plain message: a string
// as one, each part's text for a list (a bare string in the list is an error
// in vLLM).
func harmonyContents(c jinja.Value) ([]string, error) {
	switch {
	case c.IsString():
		return []string{c.AsString()}, nil
	case !c.IsList():
		return []string{""}, nil
	}
	if c.AsList().Len() > 1 {
		// Harmony encodes each part on its own, so ids can break between
		// parts where the joined text would merge them; one rendered text
		// cannot express that.
		return nil, fmt.Errorf("rendering harmony: a content of %d parts: %w", c.AsList().Len(), ErrUnsupported)
	}
	var out []string
	for _, p := range c.AsList().Items {
		if !p.IsDict() {
			return nil, fmt.Errorf("a content part is not an object: %w", ErrRequest)
		}
		t, _ := p.AsDict().Get("text")
		if t.IsString() {
			out = append(out, t.AsString())
		} else {
			out = append(out, "")
		}
	}
	if len(out) == 0 {
		return []string{""}, nil
	}
	return out, nil
}

// harmonyTools prints the tools as Harmony's TypeScript namespace. Only
// what its output was checked against is printed (testdata/vllm_golden.json):
// object parameters whose properties are strings (or string enums), numbers
// or integers, with descriptions, integer defaults and required names;
// anything else is ErrUnsupported rather than a guess.
func harmonyTools(tools []jinja.Value) (string, error) {
	var b strings.Builder
	b.WriteString("# Tools\n\n## functions\n\nnamespace functions {\n\n")
	for _, t := range tools {
		fn, _ := t.AsDict().Get("function")
		f := fn.AsDict()
		name, _ := f.Get("name")
		if desc, _ := f.Get("description"); desc.IsString() {
			b.WriteString("// " + desc.AsString() + "\n")
		}
		params, _ := f.Get("parameters")
		sig, err := harmonySignature(params)
		if err != nil {
			return "", fmt.Errorf("rendering harmony tool %q: %w", name.AsString(), err)
		}
		b.WriteString("type " + name.AsString() + " = " + sig + ";\n\n")
	}
	b.WriteString("} // namespace functions")
	return b.String(), nil
}

func harmonySignature(params jinja.Value) (string, error) {
	if !params.IsDict() {
		return "() => any", nil
	}
	p := params.AsDict()
	for _, k := range p.Keys {
		if k != "type" && k != "properties" && k != "required" && k != "additionalProperties" {
			return "", fmt.Errorf("parameters key %q: %w", k, ErrUnsupported)
		}
	}
	required := map[string]bool{}
	if r, ok := p.Get("required"); ok && r.IsList() {
		for _, n := range r.AsList().Items {
			if n.IsString() {
				required[n.AsString()] = true
			}
		}
	}
	var b strings.Builder
	b.WriteString("(_: {\n")
	if props, ok := p.Get("properties"); ok && props.IsDict() {
		d := props.AsDict()
		for _, name := range d.Keys {
			v, _ := d.Get(name)
			line, err := harmonyProperty(name, v, required[name])
			if err != nil {
				return "", err
			}
			b.WriteString(line)
		}
	}
	b.WriteString("}) => any")
	return b.String(), nil
}

// harmonyPropertyKeys are the schema keys of a property that the printed
// type reflects or that Harmony leaves out.
var harmonyPropertyKeys = map[string]bool{
	"type": true, "description": true, "enum": true, "default": true,
	"minimum": true, "maximum": true, "multipleOf": true,
}

func harmonyProperty(name string, v jinja.Value, required bool) (string, error) {
	if !v.IsDict() {
		return "", fmt.Errorf("property %q: %w", name, ErrUnsupported)
	}
	d := v.AsDict()
	for _, k := range d.Keys {
		if !harmonyPropertyKeys[k] {
			return "", fmt.Errorf("property %q key %q: %w", name, k, ErrUnsupported)
		}
	}
	typ, err := harmonyType(d)
	if err != nil {
		return "", fmt.Errorf("property %q: %w", name, err)
	}
	var b strings.Builder
	if desc, ok := d.Get("description"); ok && desc.IsString() {
		b.WriteString("// " + desc.AsString() + "\n")
	}
	b.WriteString(name)
	if !required {
		b.WriteString("?")
	}
	b.WriteString(": " + typ + ",")
	if def, ok := d.Get("default"); ok {
		if !def.IsInt() {
			return "", fmt.Errorf("property %q default: %w", name, ErrUnsupported)
		}
		b.WriteString(" // default: " + def.String())
	}
	b.WriteString("\n")
	return b.String(), nil
}

func harmonyType(d *jinja.Dict) (string, error) {
	t, _ := d.Get("type")
	if !t.IsString() {
		return "", ErrUnsupported
	}
	switch t.AsString() {
	case "number", "integer":
		return "number", nil
	case "string":
		enum, ok := d.Get("enum")
		if !ok {
			return "string", nil
		}
		if !enum.IsList() {
			return "", ErrUnsupported
		}
		var alts []string
		for _, e := range enum.AsList().Items {
			if !e.IsString() {
				return "", ErrUnsupported
			}
			alts = append(alts, `"`+e.AsString()+`"`)
		}
		return strings.Join(alts, " | "), nil
	}
	return "", ErrUnsupported
}
