package tokenizer

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestParseEngine(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Engine
		err  bool
	}{{"", EngineVLLM, false}, {"vllm", EngineVLLM, false}, {"sglang", EngineSGLang, false}, {"SGLang", EngineVLLM, true}, {"tgi", EngineVLLM, true}} {
		got, err := ParseEngine(tt.in)
		if got != tt.want || (err != nil) != tt.err {
			t.Errorf("ParseEngine(%q) = %v, %v", tt.in, got, err)
		}
	}
}

// TestRenderSGLang covers what SGLang's preprocessing does to the values a
// template sees, and every request it refuses, with a template that prints
// them.
func TestRenderSGLang(t *testing.T) {
	const src = `{{ messages | tojson }}|{{ tools | tojson }}|{{ enable_thinking }}|{{ add_generation_prompt }}`
	c, err := NewChatTemplate(src, "", "", WithEngine(EngineSGLang))
	if err != nil {
		t.Fatal(err)
	}
	user := `{"role":"user","content":"hi","name":"al"}`
	tools := `[{"function":{"parameters":{"type":"object"},"name":"f","x":1},"type":"function"}]`
	tests := []struct {
		name                        string
		msgs, tools, kwargs, choice string
		effort                      string
		cont                        bool
		want                        string
		err                         error
	}{
		{name: "user keeps role and content", msgs: `[` + user + `]`,
			want: `[{"role": "user", "content": "hi"}]|null||True`},
		{name: "trailing assistant becomes user", msgs: `[` + user + `,{"role":"assistant","content":"yo","name":"b"}]`,
			want: `[{"role": "user", "content": "hi"}, {"role": "user", "content": "yo"}]|null||True`},
		{name: "tools dumped in client order", msgs: `[` + user + `]`, tools: tools,
			want: `[{"role": "user", "content": "hi"}]|[{"type": "function", "function": {"parameters": {"type": "object"}, "name": "f", "description": null}, "defer_loading": null}]||True`},
		{name: "tool_choice none hides tools", msgs: `[` + user + `]`, tools: tools, choice: `"none"`,
			want: `[{"role": "user", "content": "hi"}]|null||True`},
		{name: "effort none switches thinking off", msgs: `[` + user + `]`, effort: "none",
			want: `[{"role": "user", "content": "hi"}]|null|False|True`},
		{name: "null user content", msgs: `[{"role":"user","content":null}]`, err: ErrRequest},
		{name: "string in content list", msgs: `[{"role":"user","content":["hi"]}]`, err: ErrRequest},
		{name: "unknown part", msgs: `[{"role":"user","content":[{"type":"x"}]}]`, err: ErrRequest},
		{name: "thinking part on user", msgs: `[{"role":"user","content":[{"type":"thinking","thinking":"t"}]}]`, err: ErrRequest},
		{name: "media part", msgs: `[{"role":"user","content":[{"type":"image_url","image_url":{"url":"u"}}]}]`, err: ErrUnsupported},
		{name: "bad role", msgs: `[{"role":"robot","content":"x"}]`, err: ErrRequest},
		{name: "non-JSON arguments", msgs: `[` + user + `,{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":"x=1"}}]},` + user + `]`, err: ErrRequest},
		{name: "array arguments", msgs: `[` + user + `,{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":"[1]"}}]},` + user + `]`, err: ErrRequest},
		{name: "reserved kwarg", msgs: `[` + user + `]`, kwargs: `{"add_generation_prompt":false}`, err: ErrUnsupported},
		{name: "tool_choice of an absent function", msgs: `[` + user + `]`, tools: tools, choice: `{"type":"function","function":{"name":"g"}}`, err: ErrRequest},
		{name: "tool_choice required without tools", msgs: `[` + user + `]`, choice: `"required"`, err: ErrRequest},
		{name: "unknown tool_choice", msgs: `[` + user + `]`, tools: tools, choice: `"sometimes"`, err: ErrRequest},
		{name: "tool without a name", msgs: `[` + user + `]`, tools: `[{"type":"function","function":{}}]`, err: ErrRequest},
		{name: "no messages", msgs: `[]`, err: ErrRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := ChatRequest{Messages: json.RawMessage(tt.msgs), ReasoningEffort: tt.effort, ContinueFinalMessage: tt.cont}
			if tt.tools != "" {
				req.Tools = json.RawMessage(tt.tools)
			}
			if tt.kwargs != "" {
				req.Kwargs = json.RawMessage(tt.kwargs)
			}
			if tt.choice != "" {
				req.ToolChoice = json.RawMessage(tt.choice)
			}
			p, err := c.RenderPrompt(req)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Text != tt.want || p.AddSpecialTokens {
				t.Fatalf("got %q (special tokens %v)\nwant %q", p.Text, p.AddSpecialTokens, tt.want)
			}
		})
	}
}

func TestRenderSGLangContinue(t *testing.T) {
	c, err := NewChatTemplate(`{% for m in messages %}{{ m.role }}:{{ m.content }};{% endfor %}{% if add_generation_prompt %}A:{% endif %}`, "", "", WithEngine(EngineSGLang))
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.RenderPrompt(ChatRequest{Messages: json.RawMessage(`[{"role":"user","content":"Count."},{"role":"assistant","content":"One, two"}]`),
		ContinueFinalMessage: true, AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Text != "user:Count.;A:" || !p.HasContinue || p.Continue != "One, two" {
		t.Fatalf("got %+v", p)
	}
}

// FuzzRenderSGLang: any messages, tools and tool_choice either render or
// fail with one of the package's errors; nothing panics.
func FuzzRenderSGLang(f *testing.F) {
	f.Add(`[{"role":"user","content":"hi"}]`, `[{"type":"function","function":{"name":"f"}}]`, `"auto"`)
	f.Add(`[{"role":"assistant","content":[{"type":"thinking","text":"t"}],"tool_calls":[{"function":{"name":"f","arguments":"{}"}}]}]`, `null`, `{"function":{"name":"f"}}`)
	f.Add(`[{"role":"tool","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]`, `[]`, `"none"`)
	c, err := NewChatTemplate(`{{ messages | tojson }}{{ tools | tojson }}`, "", "", WithEngine(EngineSGLang))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, msgs, tools, choice string) {
		if !json.Valid([]byte(msgs)) || !json.Valid([]byte(tools)) || !json.Valid([]byte(choice)) {
			return
		}
		_, err := c.RenderPrompt(ChatRequest{Messages: json.RawMessage(msgs), Tools: json.RawMessage(tools), ToolChoice: json.RawMessage(choice)})
		if err != nil && !errors.Is(err, ErrRequest) && !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrTemplate) && !errors.Is(err, ErrMalformed) {
			t.Fatalf("unexpected error kind: %v", err)
		}
	})
}
