package tokenizer

import (
	"fmt"
	"slices"

	"github.com/ardanlabs/jinja"
)

// normalizeToolCalls gives each assistant message the tool calls vLLM passes
// to the template (VLLMVersion): an empty tool_calls list is removed, so the
// template takes its plain-reply path; a call's function.arguments string is
// parsed as JSON, so templates print it re-serialised (compact JSON comes out
// with Python's separators). Arguments that are not a JSON object (a string
// that is not JSON or holds a list or a number, "") become {}. A call that
// is not an object, not of type "function" with a function object, or whose
// name or arguments is not a string, is an ErrRequest: vLLM's request
// model answers it with a 400.
func normalizeToolCalls(msgs jinja.Value, big *bigInts) error {
	l := msgs.AsList()
	for i := range l.Len() {
		m := l.Get(i)
		if roleOf(m) != "assistant" {
			continue
		}
		d := m.AsDict()
		calls, ok := d.Get("tool_calls")
		if !ok || !calls.IsList() {
			continue
		}
		if calls.AsList().Len() == 0 {
			deleteKey(d, "tool_calls")
			continue
		}
		for j, c := range calls.AsList().Items {
			if err := normalizeCall(c, big); err != nil {
				return fmt.Errorf("decoding messages[%d].tool_calls[%d]: %w: %w", i, j, ErrRequest, err)
			}
		}
	}
	return nil
}

func normalizeCall(c jinja.Value, big *bigInts) error {
	if !c.IsDict() {
		return fmt.Errorf("not an object")
	}
	call := c.AsDict()
	fn, _ := call.Get("function")
	if t, ok := call.Get("type"); (ok && (!t.IsString() || t.AsString() != "function")) || !fn.IsDict() {
		return fmt.Errorf(`not a call of type "function"`)
	}
	f := fn.AsDict()
	name, _ := f.Get("name")
	args, _ := f.Get("arguments")
	if !name.IsString() || !args.IsString() {
		return fmt.Errorf("function name or arguments is not a string")
	}
	switch {
	case args.AsString() != "":
		v, err := big.decode([]byte(args.AsString()))
		if err != nil || !v.IsDict() {
			v = jinja.NewDict()
		}
		f.Set("arguments", v)
	default:
		f.Set("arguments", jinja.NewDict())
	}
	return nil
}

func deleteKey(d *jinja.Dict, key string) {
	delete(d.Data, key)
	d.Keys = slices.DeleteFunc(d.Keys, func(k string) bool { return k == key })
}
