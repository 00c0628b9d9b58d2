package tokenizer

import (
	"slices"

	"github.com/ardanlabs/jinja"
)

// normalizeToolCalls gives each assistant message the tool calls vLLM passes
// to the template (VLLMVersion): an empty tool_calls list is removed, so the
// template takes its plain-reply path; a call's function.arguments string is
// parsed as JSON, so templates print it re-serialised (compact JSON comes out
// with Python's separators), and becomes {} when it is not JSON; arguments
// that are neither a string, an object nor a list (null, say) become {}.
func normalizeToolCalls(msgs jinja.Value) {
	l := msgs.AsList()
	for i := range l.Len() {
		m := l.Get(i)
		if !m.IsDict() {
			continue
		}
		d := m.AsDict()
		if role, _ := d.Get("role"); !role.IsString() || role.AsString() != "assistant" {
			continue
		}
		calls, ok := d.Get("tool_calls")
		if !ok || !calls.IsList() {
			continue
		}
		if calls.AsList().Len() == 0 {
			deleteKey(d, "tool_calls")
			continue
		}
		for _, c := range calls.AsList().Items {
			if c.IsDict() {
				normalizeArguments(c.AsDict())
			}
		}
	}
}

func normalizeArguments(call *jinja.Dict) {
	fn, ok := call.Get("function")
	if !ok || !fn.IsDict() {
		return
	}
	f := fn.AsDict()
	args, _ := f.Get("arguments")
	switch {
	case args.IsString():
		v, err := jsonToValue([]byte(args.AsString()))
		if err != nil {
			v = jinja.NewDict()
		}
		f.Set("arguments", v)
	case !args.IsDict() && !args.IsList():
		f.Set("arguments", jinja.NewDict())
	}
}

func deleteKey(d *jinja.Dict, key string) {
	delete(d.Data, key)
	d.Keys = slices.DeleteFunc(d.Keys, func(k string) bool { return k == key })
}
