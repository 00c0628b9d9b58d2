package tokenizer

import (
	"fmt"

	"github.com/ardanlabs/jinja"
)

// normalizeTools gives the template the tools vLLM passes it (VLLMVersion):
// each tool as its request model dumps it, with fixed keys in a fixed order
// whatever the client sent. A tool is {"type": "function", "function": ...}
// (type defaults to "function"), then "defer_loading" when set; a function is
// name, description and parameters (null when absent), then "strict" and
// "defer_loading" when set (a tool's defer_loading is copied to its function
// when the function has none). Other keys are dropped. A tool vLLM's models
// reject (no function name, another type, parameters not an object) is an
// ErrRequest: the engine answers that request with a 400.
func normalizeTools(tools jinja.Value) (jinja.Value, error) {
	if !tools.IsList() {
		return jinja.Undefined(), fmt.Errorf("decoding tools: not a list: %w", ErrRequest)
	}
	l := tools.AsList()
	out := make([]jinja.Value, len(l.Items))
	for i, t := range l.Items {
		v, err := normalizeTool(t)
		if err != nil {
			return jinja.Undefined(), fmt.Errorf("decoding tools[%d]: %w: %w", i, ErrRequest, err)
		}
		out[i] = v
	}
	return jinja.NewList(out), nil
}

func normalizeTool(t jinja.Value) (jinja.Value, error) {
	if !t.IsDict() {
		return jinja.Undefined(), fmt.Errorf("not an object")
	}
	d := t.AsDict()
	if typ, ok := d.Get("type"); ok && (!typ.IsString() || typ.AsString() != "function") {
		return jinja.Undefined(), fmt.Errorf(`type is not "function"`)
	}
	fn, ok := d.Get("function")
	if !ok || !fn.IsDict() {
		return jinja.Undefined(), fmt.Errorf("function is not an object")
	}
	deferLoading, err := optionalBool(d, "defer_loading")
	if err != nil {
		return jinja.Undefined(), err
	}
	f, err := normalizeFunction(fn.AsDict(), deferLoading)
	if err != nil {
		return jinja.Undefined(), err
	}
	out := jinja.NewDict()
	o := out.AsDict()
	o.Set("type", jinja.NewString("function"))
	o.Set("function", f)
	if !deferLoading.IsNone() {
		o.Set("defer_loading", deferLoading)
	}
	return out, nil
}

func normalizeFunction(f *jinja.Dict, toolDefer jinja.Value) (jinja.Value, error) {
	name, ok := f.Get("name")
	if !ok || !name.IsString() {
		return jinja.Undefined(), fmt.Errorf("function name is not a string")
	}
	desc, _ := f.Get("description")
	if !desc.IsString() && !desc.IsNone() && !desc.IsUndefined() {
		return jinja.Undefined(), fmt.Errorf("function description is not a string")
	}
	params, _ := f.Get("parameters")
	if !params.IsDict() && !params.IsNone() && !params.IsUndefined() {
		return jinja.Undefined(), fmt.Errorf("function parameters is not an object")
	}
	strict, err := optionalBool(f, "strict")
	if err != nil {
		return jinja.Undefined(), err
	}
	deferLoading, err := optionalBool(f, "defer_loading")
	if err != nil {
		return jinja.Undefined(), err
	}
	if deferLoading.IsNone() {
		deferLoading = toolDefer
	}
	out := jinja.NewDict()
	o := out.AsDict()
	o.Set("name", name)
	o.Set("description", noneIfUndefined(desc))
	o.Set("parameters", noneIfUndefined(params))
	if !strict.IsNone() {
		o.Set("strict", strict)
	}
	if !deferLoading.IsNone() {
		o.Set("defer_loading", deferLoading)
	}
	return out, nil
}

// optionalBool reads a bool-or-null field; absent is None.
func optionalBool(d *jinja.Dict, key string) (jinja.Value, error) {
	v, ok := d.Get(key)
	switch {
	case !ok || v.IsNone():
		return jinja.None(), nil
	case v.IsBool():
		return v, nil
	}
	return jinja.Undefined(), fmt.Errorf("%s is not a boolean", key)
}

func noneIfUndefined(v jinja.Value) jinja.Value {
	if v.IsUndefined() {
		return jinja.None()
	}
	return v
}
