package tokenizer

import (
	"encoding/json"
	"errors"
	"testing"
)

// Tools reach the template as vLLM's request models dump them: fixed keys
// in a fixed order, description and parameters null when missing, unknown
// keys dropped, integers at any size exact.
func TestNormalizeTools(t *testing.T) {
	ct, err := NewChatTemplate(`{{ tools | tojson }}`, "", "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		tools string
		want  string
	}{
		{"keys in model order", `[{"function":{"parameters":{"type":"object"},"description":"d","name":"f"},"type":"function"}]`,
			`[{"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object"}}}]`},
		{"missing description and parameters are null", `[{"type":"function","function":{"name":"f"}}]`,
			`[{"type": "function", "function": {"name": "f", "description": null, "parameters": null}}]`},
		{"type defaults to function", `[{"function":{"name":"f"}}]`,
			`[{"type": "function", "function": {"name": "f", "description": null, "parameters": null}}]`},
		{"unknown keys dropped, strict kept", `[{"type":"function","x":1,"function":{"name":"f","strict":true,"x-vendor":2}}]`,
			`[{"type": "function", "function": {"name": "f", "description": null, "parameters": null, "strict": true}}]`},
		{"null strict dropped", `[{"type":"function","function":{"name":"f","strict":null}}]`,
			`[{"type": "function", "function": {"name": "f", "description": null, "parameters": null}}]`},
		{"defer_loading copied to the function", `[{"type":"function","defer_loading":true,"function":{"name":"f"}}]`,
			`[{"type": "function", "function": {"name": "f", "description": null, "parameters": null, "defer_loading": true}, "defer_loading": true}]`},
		{"parameter key order kept", `[{"type":"function","function":{"name":"f","parameters":{"z":1,"a":2}}}]`,
			`[{"type": "function", "function": {"name": "f", "description": null, "parameters": {"z": 1, "a": 2}}}]`},
		{"integers beyond int64 exact", `[{"type":"function","function":{"name":"f","parameters":{"max":340282366920938463463374607431768211456,"min":-18446744073709551617,"i":9223372036854775807}}}]`,
			`[{"type": "function", "function": {"name": "f", "description": null, "parameters": {"max": 340282366920938463463374607431768211456, "min": -18446744073709551617, "i": 9223372036854775807}}}]`},
		{"stand-in never collides with the request", `[{"type":"function","function":{"name":"f","parameters":{"a":9223372036854775807,"b":99999999999999999999}}}]`,
			`[{"type": "function", "function": {"name": "f", "description": null, "parameters": {"a": 9223372036854775807, "b": 99999999999999999999}}}]`},
		{"floats as Python prints them", `[{"type":"function","function":{"name":"f","parameters":{"a":1.0,"b":1e10,"c":1.5e-7}}}]`,
			`[{"type": "function", "function": {"name": "f", "description": null, "parameters": {"a": 1.0, "b": 10000000000.0, "c": 1.5e-07}}}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ct.Render(ChatRequest{Messages: json.RawMessage(`[]`), Tools: json.RawMessage(tt.tools)})
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("Render = %s\nwant      %s", got, tt.want)
			}
		})
	}
}

// Tools vLLM's models reject are errors, not a guessed render.
func TestNormalizeToolsRejects(t *testing.T) {
	ct, err := NewChatTemplate(`{{ tools | tojson }}`, "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tools := range []string{
		`{"type":"function"}`, `[1]`, `[{"type":"retrieval","function":{"name":"f"}}]`,
		`[{"type":"function"}]`, `[{"function":{"name":3}}]`, `[{"function":{"name":"f","parameters":[1]}}]`,
		`[{"function":{"name":"f","description":3}}]`, `[{"function":{"name":"f","strict":"yes"}}]`,
	} {
		t.Run(tools, func(t *testing.T) {
			_, err := ct.Render(ChatRequest{Messages: json.RawMessage(`[]`), Tools: json.RawMessage(tools)})
			if !errors.Is(err, ErrRequest) {
				t.Fatalf("Render error %v, want ErrRequest", err)
			}
		})
	}
}

// continue_final_message ends the render where the final message's text
// ends, as transformers cuts it.
func TestContinueFinalMessage(t *testing.T) {
	const tmpl = `{% for m in messages %}<{{ m.role }}>{{ m.content }}</{{ m.role }}>{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}`
	const trimming = `{% for m in messages %}<{{ m.role }}>{{ m.content | trim }}</{{ m.role }}>{% endfor %}`
	const parts = `{% for m in messages %}<{{ m.role }}>{% for p in m.content %}{{ p.text }}|{% endfor %}</{{ m.role }}>{% endfor %}`
	tests := []struct {
		name, tmpl, messages string
		prompt               bool
		want, err            string
	}{
		{"open assistant reply", tmpl, `[{"role":"user","content":"hi"},{"role":"assistant","content":"Once"}]`, false, "<user>hi</user><assistant>Once", ""},
		{"trailing space kept", tmpl, `[{"role":"user","content":"hi"},{"role":"assistant","content":"One, "}]`, false, "<user>hi</user><assistant>One, ", ""},
		{"trimmed by the template", trimming, `[{"role":"user","content":"hi"},{"role":"assistant","content":"One, "}]`, false, "<user>hi</user><assistant>One,", ""},
		{"last text part", parts, `[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]`, false, "<user>a|b", ""},
		{"with a generation prompt", tmpl, `[{"role":"user","content":"hi"}]`, true, "", "both"},
		{"no messages", tmpl, `[]`, false, "", "no messages"},
		{"template drops the text", `{% for m in messages %}{{ m.role }}{% endfor %}`, `[{"role":"user","content":"hi"}]`, false, "", "render"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct, err := NewChatTemplate(tt.tmpl, "", "")
			if err != nil {
				t.Fatal(err)
			}
			got, err := ct.Render(ChatRequest{Messages: json.RawMessage(tt.messages), AddGenerationPrompt: tt.prompt, ContinueFinalMessage: true})
			if tt.err != "" {
				if !errors.Is(err, ErrTemplate) {
					t.Fatalf("Render = %q, %v; want an ErrTemplate (%s)", got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Render = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// A template that does not name the developer role gets developer messages
// as system ones, merged at the front, as vLLM converts them.
func TestDeveloperToSystem(t *testing.T) {
	const tmpl = `{% for m in messages %}{{ m | tojson }};{% endfor %}`
	tests := []struct {
		name, messages, want string
	}{
		{"first developer becomes system", `[{"role":"developer","content":"d","tools":[]},{"role":"user","content":"u"}]`,
			`{"role": "system", "content": "d"};{"role": "user", "content": "u"};`},
		{"merged with a system message", `[{"role":"system","content":"s"},{"role":"user","content":"u"},{"role":"developer","content":"d"}]`,
			`{"role": "system", "content": "s\n\nd"};{"role": "user", "content": "u"};`},
		{"no developer, system later untouched", `[{"role":"user","content":"u"},{"role":"system","content":"s"}]`,
			`{"role": "user", "content": "u"};{"role": "system", "content": "s"};`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct, err := NewChatTemplate(tmpl, "", "")
			if err != nil {
				t.Fatal(err)
			}
			got, err := ct.Render(ChatRequest{Messages: json.RawMessage(tt.messages)})
			if err != nil || got != tt.want {
				t.Fatalf("Render = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// A model's named templates are chosen per request as transformers does:
// by name, "tool_use" for requests with tools, else the default; a
// template that is not a name is the template's source.
func TestNamedTemplates(t *testing.T) {
	tk := &Tokenizer{config: Config{ChatTemplate: "default", ChatTemplates: map[string]string{
		"default": "default", "tool_use": "tool_use", "rag": "rag"}}}
	ct, err := tk.ChatTemplate()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, template, tools, want string
	}{
		{"default", "", "", "default"},
		{"tools pick tool_use", "", `[]`, "tool_use"},
		{"null tools are none", "", `null`, "default"},
		{"by name", "rag", "", "rag"},
		{"default by name with tools", "default", `[]`, "default"},
		{"a source", "{{ 1 + 1 }}", "", "2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := ChatRequest{Messages: json.RawMessage(`[]`), Template: tt.template}
			if tt.tools != "" {
				req.Tools = json.RawMessage(tt.tools)
			}
			got, err := ct.Render(req)
			if err != nil || got != tt.want {
				t.Fatalf("Render = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
