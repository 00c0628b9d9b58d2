package tokenizer

import (
	"strings"

	"github.com/ardanlabs/jinja"
)

// supportsDeveloper is vLLM's test of whether a template knows the developer
// role: it names it as a quoted string.
func supportsDeveloper(src string) bool {
	return strings.Contains(src, `"developer"`) || strings.Contains(src, `'developer'`)
}

// developerToSystem is what vLLM (VLLMVersion) does to a conversation with a
// developer message for a template that does not know the role: each becomes
// a system message without its tools, and when that leaves a system message
// anywhere but first, or more than one, all system messages are merged into
// one at the front, their non-empty texts joined by a blank line.
func developerToSystem(msgs jinja.Value) jinja.Value {
	l := msgs.AsList()
	found := false
	for _, m := range l.Items {
		if roleOf(m) == "developer" {
			found = true
			m.AsDict().Set("role", jinja.NewString("system"))
			deleteKey(m.AsDict(), "tools")
		}
	}
	if !found {
		return msgs
	}
	var texts []string
	var rest []jinja.Value
	merge := false
	for i, m := range l.Items {
		if roleOf(m) != "system" {
			rest = append(rest, m)
			continue
		}
		merge = merge || i > 0 || len(texts) > 0
		if text := systemText(m); text != "" {
			texts = append(texts, text)
		}
	}
	if !merge {
		return msgs
	}
	merged := jinja.NewDict()
	merged.AsDict().Set("role", jinja.NewString("system"))
	merged.AsDict().Set("content", jinja.NewString(strings.Join(texts, "\n\n")))
	return jinja.NewList(append([]jinja.Value{merged}, rest...))
}

func roleOf(m jinja.Value) string {
	if !m.IsDict() {
		return ""
	}
	r, _ := m.AsDict().Get("role")
	if !r.IsString() {
		return ""
	}
	return r.AsString()
}

// systemText is a system message's content as vLLM merges it: a string, or
// the "\n"-joined texts of a list's parts that have one.
func systemText(m jinja.Value) string {
	c, _ := m.AsDict().Get("content")
	if !c.IsList() {
		if c.IsString() {
			return c.AsString()
		}
		return ""
	}
	var parts []string
	for _, p := range c.AsList().Items {
		switch {
		case p.IsString():
			parts = append(parts, p.AsString())
		case p.IsDict():
			if t, ok := p.AsDict().Get("text"); ok {
				parts = append(parts, t.String())
			}
		}
	}
	return strings.Join(parts, "\n")
}
