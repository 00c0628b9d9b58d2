package tokenizer

import (
	"encoding/json"
	"fmt"

	"github.com/ardanlabs/jinja"
)

// sglangFunctionFields are the fields of SGLang's Function model.
var sglangFunctionFields = []string{"description", "name", "parameters", "strict", "defer_loading"}

// sglangTools dumps tools as SGLang's Tool model does: {"type", "function",
// "defer_loading"} (null when absent); the function keeps the client's key
// order, its other fields (description, parameters null when missing)
// after, strict and defer_loading only when set, unknown keys dropped.
func sglangTools(v jinja.Value) (jinja.Value, error) {
	if !v.IsList() {
		return v, fmt.Errorf("tools is not a list: %w", ErrRequest)
	}
	out := make([]jinja.Value, 0, v.AsList().Len())
	for i, t := range v.AsList().Items {
		tool, err := sglangTool(t)
		if err != nil {
			return v, fmt.Errorf("tools[%d]: %w: %w", i, ErrRequest, err)
		}
		out = append(out, tool)
	}
	return jinja.NewList(out), nil
}

func sglangTool(t jinja.Value) (jinja.Value, error) {
	if !t.IsDict() {
		return t, fmt.Errorf("not an object")
	}
	td := t.AsDict()
	typ, ok := td.Get("type")
	if !ok {
		typ = jinja.NewString("function")
	}
	if !typ.IsString() {
		return t, fmt.Errorf("type is not a string")
	}
	toolDefer, _ := td.Get("defer_loading")
	if toolDefer.IsUndefined() {
		toolDefer = jinja.None()
	}
	if !toolDefer.IsNone() && !toolDefer.IsBool() {
		return t, fmt.Errorf("defer_loading is not a boolean")
	}
	fn, _ := td.Get("function")
	if !fn.IsDict() {
		return t, fmt.Errorf("function is not an object")
	}
	fd := fn.AsDict()
	fields := map[string]jinja.Value{}
	for _, k := range sglangFunctionFields {
		v, _ := fd.Get(k)
		if v.IsUndefined() {
			v = jinja.None()
		}
		fields[k] = v
	}
	if !fields["name"].IsString() {
		return t, fmt.Errorf("function name is not a string")
	}
	if d := fields["description"]; !d.IsNone() && !d.IsString() {
		return t, fmt.Errorf("function description is not a string")
	}
	for _, k := range []string{"strict", "defer_loading"} {
		if b := fields[k]; !b.IsNone() && !b.IsBool() {
			return t, fmt.Errorf("function %s is not a boolean", k)
		}
	}
	if fields["defer_loading"].IsNone() {
		fields["defer_loading"] = toolDefer
	}
	f := jinja.NewDict()
	put := func(k string) {
		if _, done := f.AsDict().Get(k); done {
			return
		}
		if v := fields[k]; !(k == "strict" || k == "defer_loading") || !v.IsNone() {
			f.AsDict().Set(k, v)
		}
	}
	for _, k := range fd.Keys {
		if _, known := fields[k]; known {
			put(k)
		}
	}
	for _, k := range sglangFunctionFields {
		put(k)
	}
	out := jinja.NewDict()
	out.AsDict().Set("type", typ)
	out.AsDict().Set("function", f)
	out.AsDict().Set("defer_loading", toolDefer)
	return out, nil
}

// flatTools is each tool's function alone, SGLang's second try for
// templates that want tools without the OpenAI wrapper.
func flatTools(tools jinja.Value) jinja.Value {
	out := make([]jinja.Value, 0, tools.AsList().Len())
	for _, t := range tools.AsList().Items {
		if fn, ok := t.AsDict().Get("function"); ok {
			out = append(out, fn)
			continue
		}
		out = append(out, t)
	}
	return jinja.NewList(out)
}

// toolChoice is a string tool_choice, "{}" for an object, "" for none.
func toolChoice(raw json.RawMessage) string {
	var s string
	switch {
	case isNull(raw):
		return ""
	case json.Unmarshal(raw, &s) == nil:
		return s
	}
	return "{}"
}

// sglangToolChoice is the tools SGLang's template sees under tool_choice:
// none under "none", the named function alone under a function choice (it
// must be among them).
func sglangToolChoice(tools jinja.Value, raw json.RawMessage) (jinja.Value, error) {
	switch choice := toolChoice(raw); choice {
	case "", "auto", "required":
		if tools.AsList().Len() == 0 {
			if choice == "required" {
				return tools, fmt.Errorf("tool_choice required without tools: %w", ErrRequest)
			}
			return jinja.None(), nil
		}
		return tools, nil
	case "none":
		return jinja.None(), nil
	case "{}":
	default:
		return tools, fmt.Errorf("tool_choice %q: %w", choice, ErrRequest)
	}
	var c struct {
		Function struct {
			Name *string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &c) != nil || c.Function.Name == nil {
		return tools, fmt.Errorf("tool_choice names no function: %w", ErrRequest)
	}
	var picked []jinja.Value
	for _, t := range tools.AsList().Items {
		fn, _ := t.AsDict().Get("function")
		if name, _ := fn.AsDict().Get("name"); name.AsString() == *c.Function.Name {
			picked = append(picked, t)
		}
	}
	if len(picked) == 0 {
		return tools, fmt.Errorf("tool_choice names a function not among the tools: %w", ErrRequest)
	}
	return jinja.NewList(picked), nil
}
