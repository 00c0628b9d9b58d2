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

// Contents reach the template as vLLM passes them (VLLMVersion).
func TestNormalizeContents(t *testing.T) {
	const tmpl = `{% for m in messages %}[{{ m['content'] }}]{% endfor %}`
	tests := []struct {
		name     string
		messages string
		format   ContentFormat
		want     string
	}{
		{"string content untouched", `[{"role":"user","content":"hi"}]`, ContentString, "[hi]"},
		{"text parts joined by newline", `[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]`, ContentString, "[a\nb]"},
		{"media cuts the render where its message's content starts", `[{"role":"user","content":"q"},{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"a"}]}]`, ContentString, "[q]["},
		{"media cut for openai too", `[{"role":"user","content":"q"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"x"}}]}]`, ContentOpenAI, "[[{'type': 'text', 'text': 'q'}]][[{'type': 'text', 'text': '"},
		{"empty list", `[{"role":"user","content":[]}]`, ContentString, "[]"},
		{"openai format keeps the list", `[{"role":"user","content":[{"type":"text","text":"a"}]}]`, ContentOpenAI, "[[{'type': 'text', 'text': 'a'}]]"},
		{"null content is empty", `[{"role":"assistant","content":null,"tool_calls":[]}]`, ContentString, "[]"},
		{"missing content is empty", `[{"role":"assistant"}]`, ContentString, "[]"},
		{"null content is an empty list for openai", `[{"role":"assistant","content":null}]`, ContentOpenAI, "[[]]"},
		{"missing content is an empty list for openai", `[{"role":"assistant"}]`, ContentOpenAI, "[[]]"},
		{"bare string is a text part", `[{"role":"user","content":["a",{"type":"text","text":"b"}]}]`, ContentString, "[a\nb]"},
		{"bare string wrapped for openai", `[{"role":"user","content":["a"]}]`, ContentOpenAI, "[[{'type': 'text', 'text': 'a'}]]"},
		{"empty texts dropped", `[{"role":"user","content":["",{"type":"text","text":""},{"type":"text","text":null},"a"]}]`, ContentString, "[a]"},
		{"other text part types", `[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"refusal","refusal":"b"},{"type":"thinking","thinking":"c"},{"type":"output_text","text":"d"}]}]`, ContentString, "[a\nb\nc\nd]"},
		{"string content is one text part for openai", `[{"role":"user","content":"hi"}]`, ContentOpenAI, "[[{'type': 'text', 'text': 'hi'}]]"},
		{"text part keeps unknown fields for openai", `[{"role":"user","content":[{"cache_control":{"type":"ephemeral"},"text":"a","type":"text"}]}]`, ContentOpenAI,
			"[[{'type': 'text', 'text': 'a', 'cache_control': {'type': 'ephemeral'}}]]"},
		{"input_text becomes text for openai", `[{"role":"user","content":[{"type":"input_text","text":"a"}]}]`, ContentOpenAI, "[[{'type': 'text', 'text': 'a'}]]"},
		{"tool message text parts joined for openai", `[{"role":"tool","content":[{"type":"text","text":"a"},{"type":"text","text":""},"b"]}]`, ContentOpenAI, "[a\n\nb]"},
		{"tool message string for openai", `[{"role":"tool","content":"r"}]`, ContentOpenAI, "[r]"},
		{"billing header line dropped", `[{"role":"system","content":"x-anthropic-billing-header: cch=1\nRules."}]`, ContentString, "[Rules.]"},
		{"billing header alone dropped", `[{"role":"system","content":[{"type":"text","text":"x-anthropic-billing-header: cch=1"},"Rules."]}]`, ContentOpenAI, "[[{'type': 'text', 'text': 'Rules.'}]]"},
		{"billing header kept outside system", `[{"role":"user","content":"x-anthropic-billing-header: a\nb"}]`, ContentString, "[x-anthropic-billing-header: a\nb]"},
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
