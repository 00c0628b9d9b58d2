package tokenizer

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// Harmony renders each shape as openai_harmony does (the vLLM golden test
// in extproc compares the ids with vLLM's); these check the pieces a golden
// shape would not name.
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
		{"boolean", user, tool(`{"type":"boolean","default":false}`), "", "x?: boolean, // default: false", nil},
		{"float default", user, tool(`{"type":"number","default":1e-7}`), "", "x?: number, // default: 1e-7", nil},
		{"float default decimal", user, tool(`{"type":"number","default":2}`), "", "// default: 2\n", nil},
		{"nested", user, tool(`{"type":"object","properties":{"y":{"type":"array","items":{"type":"string"}}}}`), "",
			"x?: {\n    y?: string[],\n    },\n", nil},
		{"multi-part content", `[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]`, "", "", "<|message|>ab<|end|>", nil},
		{"non-string arguments refused", `[{"role":"assistant","content":null,"tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":{}}}]}]`, "", "", "", ErrRequest},
		{"null tool_calls refused", `[{"role":"assistant","content":"x","tool_calls":null}]`, "", "", "", ErrUnsupported},
		{"bare string part", `[{"role":"user","content":["a"]}]`, "", "", "", ErrRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := ChatRequest{Messages: json.RawMessage(tt.messages), ReasoningEffort: tt.effort}
			if tt.tools != "" {
				req.Tools = json.RawMessage(tt.tools)
			}
			p, err := h.Render(req)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("Render error %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if got := p.String(); !strings.Contains(got, tt.want) {
				t.Fatalf("Render = %q; want it to contain %q", got, tt.want)
			}
		})
	}
}

// vLLM's request model refuses continue_final_message with a sent
// add_generation_prompt of true; the default alone is accepted.
func TestHarmonyContinueFlags(t *testing.T) {
	h := NewHarmonyChat(func() string { return "2025-03-07" })
	req := ChatRequest{Messages: json.RawMessage(`[{"role":"user","content":"hi"}]`), AddGenerationPrompt: true, ContinueFinalMessage: true}
	if _, err := h.Render(req); err != nil {
		t.Fatalf("default add_generation_prompt: %v", err)
	}
	req.GenerationPromptSent = true
	if _, err := h.Render(req); !errors.Is(err, ErrRequest) {
		t.Fatalf("both sent: %v, want ErrRequest", err)
	}
}

// The serde/ryu number text openai_harmony prints for a default.
func TestSerdeNumber(t *testing.T) {
	for in, want := range map[string]string{
		"3": "3", "-0": "0", "0.5": "0.5", "1e-7": "1e-7", "1.5e-7": "1.5e-7", "2.0": "2.0", "1e16": "1e+16",
		"1e15": "1000000000000000.0", "0.00001": "0.00001", "0.000001": "1e-6", "123456789.125": "123456789.125",
		"18446744073709551615": "18446744073709551615", "18446744073709551616": "1.8446744073709552e+19",
		"-9223372036854775809": "-9.223372036854776e+18", "-2.5": "-2.5", "1E2": "100.0",
	} {
		if got := serdeNumber(in); got != want {
			t.Errorf("serdeNumber(%s) = %s, want %s", in, got, want)
		}
	}
}

// Text that looks like a special token is encoded as text, and each text
// on its own.
func TestAppendHarmonyOrdinary(t *testing.T) {
	tk := loadFamily(t, "gptoss")
	p := &HarmonyPrompt{}
	p.special("<|start|>")
	p.text("<|end|>")
	ids, err := tk.AppendHarmony(nil, p)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := tk.addedID("<|end|>")
	if len(ids) < 3 || ids[1] == end {
		t.Fatalf("ids %v: <|end|> typed in text became the special token", ids)
	}
	joined, _ := tk.AppendHarmony(nil, &HarmonyPrompt{parts: []harmonyPart{{text: "ab"}}})
	split, _ := tk.AppendHarmony(nil, &HarmonyPrompt{parts: []harmonyPart{{text: "a"}, {text: "b"}}})
	if len(split) != 2 || len(joined) != 1 {
		t.Fatalf("ab as one text %v, as two %v", joined, split)
	}
	bad := &HarmonyPrompt{}
	bad.special("<|nope|>")
	if _, err := tk.AppendHarmony(nil, bad); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("unknown special token: %v", err)
	}
}
