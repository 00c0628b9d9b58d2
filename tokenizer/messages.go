package tokenizer

import "github.com/ardanlabs/jinja"

// rebuildMessages keeps of each message only the fields vLLM passes to the
// template (VLLMVersion), in its order: role and content; for an assistant,
// tool_calls (unless null) and reasoning, copied to reasoning_content; for a
// tool message, tool_call_id; name and task when they are strings; for a
// developer message, tools (null when absent). Any other field, such as a
// reasoning_content the client sent back, does not reach the template.
// Contents must already be normalised (normalizeContents).
func rebuildMessages(msgs jinja.Value) {
	l := msgs.AsList()
	for i, m := range l.Items {
		if m.IsDict() {
			l.Items[i] = rebuildMessage(m.AsDict())
		}
	}
}

func rebuildMessage(m *jinja.Dict) jinja.Value {
	out := jinja.NewDict()
	d := out.AsDict()
	role, _ := m.Get("role")
	d.Set("role", role)
	if c, ok := m.Get("content"); ok {
		d.Set("content", c)
	}
	r := ""
	if role.IsString() {
		r = role.AsString()
	}
	switch r {
	case "assistant":
		if calls, ok := m.Get("tool_calls"); ok && !calls.IsNone() {
			d.Set("tool_calls", calls)
		}
		if reasoning, ok := m.Get("reasoning"); ok && !reasoning.IsNone() {
			d.Set("reasoning", reasoning)
			d.Set("reasoning_content", reasoning)
		}
	case "tool":
		if id, ok := m.Get("tool_call_id"); ok {
			d.Set("tool_call_id", id)
		}
	}
	for _, key := range []string{"name", "task"} {
		if v, ok := m.Get(key); ok && v.IsString() {
			d.Set(key, v)
		}
	}
	if r == "developer" {
		tools, ok := m.Get("tools")
		if !ok {
			tools = jinja.None()
		}
		d.Set("tools", tools)
	}
	return out
}
