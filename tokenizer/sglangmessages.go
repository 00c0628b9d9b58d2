package tokenizer

import (
	"fmt"
	"strings"

	"github.com/ardanlabs/jinja"
)

// sglangGenericFields are the fields of SGLang's non-user message model, in
// its order; a user message has role and content only.
var sglangGenericFields = []string{"tool_call_id", "name", "phase", "reasoning_content", "tool_calls", "tools", "prefix"}

// sglangRoles are the roles SGLang's message models accept (lower-cased).
var sglangRoles = map[string]bool{
	"user": true, "system": true, "assistant": true, "tool": true, "function": true,
	"developer": true, "latest_reminder": true, "root": true,
}

// sglangMessage validates and dumps one message as SGLang's request models
// do, then drops its null fields and flattens its content for the template.
func (c *ChatTemplate) sglangMessage(m jinja.Value, big *bigInts) (jinja.Value, error) {
	if !m.IsDict() {
		return m, fmt.Errorf("not an object")
	}
	d := m.AsDict()
	role, _ := d.Get("role")
	if !role.IsString() {
		return m, fmt.Errorf("role is not a string")
	}
	r := role.AsString()
	if r != "user" {
		r = strings.ToLower(r)
	}
	if !sglangRoles[r] {
		return m, fmt.Errorf("role %q is not one SGLang accepts", r)
	}
	out := jinja.NewDict()
	o := out.AsDict()
	o.Set("role", jinja.NewString(r))
	content, has := d.Get("content")
	if !has {
		content = jinja.None()
	}
	if r == "user" && content.IsNone() {
		return m, fmt.Errorf("a user message needs a content")
	}
	text, err := c.sglangContent(content, r)
	if err != nil {
		return m, err
	}
	o.Set("content", text)
	if r == "user" {
		return out, nil
	}
	for _, k := range sglangGenericFields {
		v, ok := d.Get(k)
		if !ok || v.IsNone() {
			continue
		}
		switch k {
		case "tool_calls":
			if v, err = sglangToolCalls(v, r == "assistant", big); err != nil {
				return m, err
			}
		case "tools":
			if v, err = sglangTools(v); err != nil {
				return m, err
			}
		case "prefix":
			if !v.IsBool() {
				return m, fmt.Errorf("prefix is not a boolean")
			}
		case "phase":
			if !v.IsString() || (v.AsString() != "commentary" && v.AsString() != "final_answer") {
				return m, fmt.Errorf("phase is not commentary or final_answer")
			}
		default:
			if !v.IsString() {
				return m, fmt.Errorf("%s is not a string", k)
			}
		}
		o.Set(k, v)
	}
	return out, nil
}

// sglangContent validates a content (a string, a list of parts, or null)
// and flattens it: a null content is "", a string stays; parts become the
// " "-joined texts for a string-format template, text parts
// {"type": "text", "text"} for a looping one (a tool message's text parts
// joined with " " into a string). Media parts are refused (ErrUnsupported):
// the router routes media requests on load for SGLang pools.
func (c *ChatTemplate) sglangContent(content jinja.Value, role string) (jinja.Value, error) {
	switch {
	case content.IsNone():
		return jinja.NewString(""), nil
	case content.IsString():
		return content, nil
	case !content.IsList():
		return content, fmt.Errorf("content is neither a string nor a list")
	}
	var texts []string
	parts := []jinja.Value{}
	for _, p := range content.AsList().Items {
		if !p.IsDict() {
			return content, fmt.Errorf("a content part is not an object")
		}
		pd := p.AsDict()
		t, _ := pd.Get("type")
		if !t.IsString() {
			return content, fmt.Errorf("a content part has no type")
		}
		switch t.AsString() {
		case "text":
			text, _ := pd.Get("text")
			if !text.IsString() {
				return content, fmt.Errorf("a text part's text is not a string")
			}
			texts = append(texts, text.AsString())
			w := jinja.NewDict()
			w.AsDict().Set("type", jinja.NewString("text"))
			w.AsDict().Set("text", text)
			parts = append(parts, w)
		case "thinking", "reasoning":
			if role != "assistant" {
				return content, fmt.Errorf("thinking parts are only valid in assistant messages")
			}
			thinking, _ := pd.Get("thinking")
			text, _ := pd.Get("text")
			if absent(thinking) == absent(text) {
				return content, fmt.Errorf("a thinking part needs exactly one of thinking or text")
			}
		case "image_url", "video_url", "audio_url", "input_audio", "tool_reference":
			return content, fmt.Errorf("content part %q: %w", t.AsString(), ErrUnsupported)
		default:
			return content, fmt.Errorf("unsupported part type %q", t.AsString())
		}
	}
	if c.format == ContentString || role == "tool" {
		return jinja.NewString(strings.Join(texts, " ")), nil
	}
	return jinja.NewList(parts), nil
}

// sglangToolCalls dumps tool calls as SGLang's ToolCall model does (id,
// index, type, function with name and arguments, nulls kept), an
// assistant's string arguments parsed as a JSON object (anything else is
// refused, as SGLang refuses it).
func sglangToolCalls(v jinja.Value, assistant bool, big *bigInts) (jinja.Value, error) {
	if !v.IsList() {
		return v, fmt.Errorf("tool_calls is not a list")
	}
	out := make([]jinja.Value, 0, v.AsList().Len())
	for j, c := range v.AsList().Items {
		if !c.IsDict() {
			return v, fmt.Errorf("tool_calls[%d] is not an object", j)
		}
		cd := c.AsDict()
		call := jinja.NewDict()
		for _, k := range []string{"id", "index"} {
			x, _ := cd.Get(k)
			if x.IsUndefined() {
				x = jinja.None()
			}
			if !x.IsNone() && (k == "id" && !x.IsString() || k == "index" && !x.IsInt()) {
				return v, fmt.Errorf("tool_calls[%d].%s has the wrong type", j, k)
			}
			call.AsDict().Set(k, x)
		}
		if t, ok := cd.Get("type"); ok && (!t.IsString() || t.AsString() != "function") {
			return v, fmt.Errorf(`tool_calls[%d] is not of type "function"`, j)
		}
		call.AsDict().Set("type", jinja.NewString("function"))
		fn, _ := cd.Get("function")
		if !fn.IsDict() {
			return v, fmt.Errorf("tool_calls[%d].function is not an object", j)
		}
		f := jinja.NewDict()
		name, _ := fn.AsDict().Get("name")
		args, _ := fn.AsDict().Get("arguments")
		if name.IsUndefined() {
			name = jinja.None()
		}
		if args.IsUndefined() {
			args = jinja.None()
		}
		if !name.IsNone() && !name.IsString() || !args.IsNone() && !args.IsString() && !args.IsDict() {
			return v, fmt.Errorf("tool_calls[%d].function has the wrong types", j)
		}
		if assistant && args.IsString() {
			parsed, err := big.decode([]byte(args.AsString()))
			if err != nil || !parsed.IsDict() {
				return v, fmt.Errorf("tool_calls[%d].function.arguments is not a JSON object", j)
			}
			args = parsed
		}
		f.AsDict().Set("name", name)
		f.AsDict().Set("arguments", args)
		call.AsDict().Set("function", f)
		out = append(out, call)
	}
	return jinja.NewList(out), nil
}

// absent is a missing or null field.
func absent(v jinja.Value) bool { return v.IsNone() || v.IsUndefined() }
