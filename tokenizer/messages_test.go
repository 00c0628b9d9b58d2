package tokenizer

import (
	"encoding/json"
	"testing"
)

// Messages reach the template with only the fields vLLM copies, in its order.
func TestRebuildMessages(t *testing.T) {
	// The template names the developer role, so vLLM keeps it.
	ct, err := NewChatTemplate(`{# 'developer' #}{% for m in messages %}{{ m | tojson }};{% endfor %}`, "", "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		messages string
		want     string
	}{
		{"unknown fields dropped", `[{"content":"x","role":"user","extra":1}]`, `{"role": "user", "content": "x"};`},
		{"reasoning copied to reasoning_content", `[{"role":"assistant","content":"a","reasoning":"r"}]`,
			`{"role": "assistant", "content": "a", "reasoning": "r", "reasoning_content": "r"};`},
		{"reasoning_content alone dropped", `[{"role":"assistant","content":"a","reasoning_content":"r"}]`, `{"role": "assistant", "content": "a"};`},
		{"null tool_calls dropped", `[{"role":"assistant","content":"a","tool_calls":null}]`, `{"role": "assistant", "content": "a"};`},
		{"tool_call_id kept for tool", `[{"role":"tool","tool_call_id":"c1","content":"r"}]`, `{"role": "tool", "content": "r", "tool_call_id": "c1"};`},
		{"tool_call_id dropped elsewhere", `[{"role":"user","tool_call_id":"c1","content":"r"}]`, `{"role": "user", "content": "r"};`},
		{"string name and task kept", `[{"role":"user","content":"x","task":"t","name":"bob"}]`, `{"role": "user", "content": "x", "name": "bob", "task": "t"};`},
		{"non-string name dropped", `[{"role":"user","content":"x","name":3}]`, `{"role": "user", "content": "x"};`},
		{"developer gets tools", `[{"role":"developer","content":"x"}]`, `{"role": "developer", "content": "x", "tools": null};`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
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
