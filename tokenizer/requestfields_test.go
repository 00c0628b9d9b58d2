package tokenizer

import (
	"encoding/json"
	"testing"
)

// The request's add_generation_prompt and reasoning_effort reach the
// template over chat_template_kwargs of the same name, as vLLM merges them;
// reasoning_effort also sets enable_thinking unless the kwargs name it.
func TestRenderRequestFieldsOverKwargs(t *testing.T) {
	const tmpl = `{{ add_generation_prompt }}|` +
		`{% if reasoning_effort is defined %}{{ reasoning_effort }}{% else %}-{% endif %}|` +
		`{% if enable_thinking is defined %}{{ enable_thinking }}{% else %}-{% endif %}`
	ct, err := NewChatTemplate(tmpl, "", "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		prompt bool
		effort string
		kwargs string
		want   string
	}{
		{"nothing set", true, "", "", "True|-|-"},
		{"request add_generation_prompt over kwargs", true, "", `{"add_generation_prompt":false}`, "True|-|-"},
		{"request add_generation_prompt off", false, "", `{"add_generation_prompt":true}`, "False|-|-"},
		{"effort none turns thinking off", true, "none", "", "True|none|False"},
		{"other efforts turn it on", true, "high", "", "True|high|True"},
		{"kwargs enable_thinking wins", true, "low", `{"enable_thinking":false}`, "True|low|False"},
		{"kwargs enable_thinking null still wins", true, "none", `{"enable_thinking":null}`, "True|none|None"},
		{"request effort over kwargs", true, "high", `{"reasoning_effort":"low"}`, "True|high|True"},
		{"kwargs effort alone", true, "", `{"reasoning_effort":"low"}`, "True|low|-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := ChatRequest{Messages: json.RawMessage(`[]`), AddGenerationPrompt: tt.prompt, ReasoningEffort: tt.effort}
			if tt.kwargs != "" {
				req.Kwargs = json.RawMessage(tt.kwargs)
			}
			got, err := ct.Render(req)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("Render = %q, want %q", got, tt.want)
			}
		})
	}
}

// On Qwen 3, whose template reads enable_thinking, reasoning_effort "none"
// renders as enable_thinking false does.
func TestReasoningEffortNoneOnQwen3(t *testing.T) {
	ct, err := loadFamily(t, "qwen3").ChatTemplate()
	if err != nil {
		t.Fatal(err)
	}
	msgs := json.RawMessage(`[{"role":"user","content":"hi"}]`)
	render := func(req ChatRequest) string {
		t.Helper()
		out, err := ct.Render(req)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	off := render(ChatRequest{Messages: msgs, AddGenerationPrompt: true, Kwargs: json.RawMessage(`{"enable_thinking":false}`)})
	on := render(ChatRequest{Messages: msgs, AddGenerationPrompt: true})
	if got := render(ChatRequest{Messages: msgs, AddGenerationPrompt: true, ReasoningEffort: "none"}); got != off || got == on {
		t.Fatalf("effort none renders %q; enable_thinking false renders %q", got, off)
	}
	if got := render(ChatRequest{Messages: msgs, AddGenerationPrompt: true, ReasoningEffort: "medium"}); got != on {
		t.Fatalf("effort medium renders %q; the default renders %q", got, on)
	}
}

// /tokenize has no reasoning_effort, so it travels as the kwargs it becomes.
func TestRemoteKwargs(t *testing.T) {
	tests := []struct {
		name   string
		effort string
		kwargs string
		want   string // "" for none sent
	}{
		{"none", "", "", ""},
		{"kwargs as given", "", `{"b":1,"a":2}`, `{"b":1,"a":2}`},
		{"effort added", "none", "", `{"enable_thinking":false,"reasoning_effort":"none"}`},
		{"documents added", "", `{"documents":[]}`, `{"documents":[{"text":"d"}]}`},
		{"effort over kwargs", "high", `{"reasoning_effort":"low","x":1}`, `{"enable_thinking":true,"reasoning_effort":"high","x":1}`},
		{"kwargs enable_thinking kept", "none", `{"enable_thinking":true}`, `{"enable_thinking":true,"reasoning_effort":"none"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := ChatRequest{ReasoningEffort: tt.effort}
			if tt.kwargs != "" {
				req.Kwargs = json.RawMessage(tt.kwargs)
			}
			if tt.name == "documents added" {
				req.Documents = json.RawMessage(`[{"text":"d"}]`)
			}
			got, err := remoteKwargs(req)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("remoteKwargs = %s, want %s", got, tt.want)
			}
		})
	}
}

// The request's documents reach the template over a kwargs entry of that
// name; without them the kwargs' documents (or none) stay.
func TestRenderDocuments(t *testing.T) {
	ct, err := NewChatTemplate(`{{ documents | tojson }}`, "", "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, docs, kwargs, want string
	}{
		{"none", "", "", "null"},
		{"request documents", `[{"title":"t","text":"x"}]`, "", `[{"title": "t", "text": "x"}]`},
		{"request over kwargs", `[{"text":"x"}]`, `{"documents":[{"text":"k"}]}`, `[{"text": "x"}]`},
		{"kwargs alone", "", `{"documents":[{"text":"k"}]}`, `[{"text": "k"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := ChatRequest{Messages: json.RawMessage(`[]`)}
			if tt.docs != "" {
				req.Documents = json.RawMessage(tt.docs)
			}
			if tt.kwargs != "" {
				req.Kwargs = json.RawMessage(tt.kwargs)
			}
			got, err := ct.Render(req)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("Render = %q, want %q", got, tt.want)
			}
		})
	}
}
