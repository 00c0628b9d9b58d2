package tokenizer

import (
	"encoding/json"
	"testing"
)

func TestDetectContentFormat(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want ContentFormat
	}{
		{"reads content as text", `{% for m in messages %}{{ m['content'] }}{% endfor %}`, ContentString},
		{"loops over item access", `{% for m in messages %}{% for p in m['content'] %}{{ p.text }}{% endfor %}{% endfor %}`, ContentOpenAI},
		{"loops over attribute, trimmed", `{%- for m in messages -%}{%- for p in m.content -%}x{%- endfor -%}{%- endfor -%}`, ContentOpenAI},
		{"double quotes", `{% for m in messages %}{% for p in m["content"] %}x{% endfor %}{% endfor %}`, ContentOpenAI},
		{"through a variable", `{% for m in messages %}{% set c = m.content %}{% for p in c %}x{% endfor %}{% endfor %}`, ContentOpenAI},
		{"variable set but not looped", `{% for m in messages %}{% set c = m.content %}{{ c }}{% endfor %}`, ContentString},
		{"loop over another variable", `{% set c = m.content %}{% for p in cc %}x{% endfor %}`, ContentString},
		{"loop over a method result", `{% for p in m.content.split('x') %}x{% endfor %}`, ContentString},
		{"no template", ``, ContentString},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DetectContentFormat(tt.src); got != tt.want {
				t.Fatalf("DetectContentFormat = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFlattenContents(t *testing.T) {
	const tmpl = `{% for m in messages %}[{{ m['content'] }}]{% endfor %}`
	tests := []struct {
		name     string
		messages string
		format   ContentFormat
		want     string
	}{
		{"string content untouched", `[{"role":"user","content":"hi"}]`, ContentString, "[hi]"},
		{"text parts joined by newline", `[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]`, ContentString, "[a\nb]"},
		{"non-text parts dropped", `[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"a"}]}]`, ContentString, "[a]"},
		{"empty list", `[{"role":"user","content":[]}]`, ContentString, "[]"},
		{"openai format keeps the list", `[{"role":"user","content":[{"type":"text","text":"a"}]}]`, ContentOpenAI, "[[{'type': 'text', 'text': 'a'}]]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct, err := NewChatTemplate(tmpl, "", "", WithContentFormat(tt.format))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ct.Render(ChatRequest{Messages: json.RawMessage(tt.messages)})
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("Render = %q, want %q", got, tt.want)
			}
		})
	}
}
