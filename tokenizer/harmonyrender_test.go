package tokenizer

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// Harmony renders the checked shapes (the vLLM golden test in extproc
// compares them with openai_harmony's ids) and refuses, rather than guesses,
// what it was not checked against.
func TestHarmonyChat(t *testing.T) {
	h := NewHarmonyChat(func() string { return "2025-03-07" })
	user := `[{"role":"user","content":"hi"}]`
	tool := func(prop string) string {
		return `[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":` + prop + `}}}}]`
	}
	tests := []struct {
		name, messages, tools, effort string
		want                          string // a substring of the render
		err                           error
	}{
		{"date and default effort", user, "", "", "Current date: 2025-03-07\n\nReasoning: medium", nil},
		{"effort", user, "", "high", "Reasoning: high", nil},
		{"effort none", user, "", "none", "", ErrRequest},
		{"system as instructions", `[{"role":"system","content":"Be brief."},{"role":"user","content":"hi"}]`, "", "",
			"<|start|>developer<|message|># Instructions\n\nBe brief.<|end|><|start|>user<|message|>hi<|end|><|start|>assistant", nil},
		{"string enum", user, tool(`{"type":"string","enum":["a","b"]}`), "", `x?: "a" | "b",`, nil},
		{"integer default", user, tool(`{"type":"integer","default":3}`), "", "x?: number, // default: 3", nil},
		{"boolean refused", user, tool(`{"type":"boolean"}`), "", "", ErrUnsupported},
		{"float default refused", user, tool(`{"type":"number","default":0.5}`), "", "", ErrUnsupported},
		{"multi-part content refused", `[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]`, "", "", "", ErrUnsupported},
		{"non-string arguments refused", `[{"role":"assistant","content":null,"tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":{}}}]}]`, "", "", "", ErrRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := ChatRequest{Messages: json.RawMessage(tt.messages), ReasoningEffort: tt.effort}
			if tt.tools != "" {
				req.Tools = json.RawMessage(tt.tools)
			}
			got, err := h.Render(req)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("Render error %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil || !strings.Contains(got, tt.want) {
				t.Fatalf("Render = %q, %v; want it to contain %q", got, err, tt.want)
			}
		})
	}
}
