package tokenizer

import (
	"encoding/json"
	"testing"
)

// FuzzHarmony feeds arbitrary messages, tools and Responses input to the
// Harmony renders: they must return a prompt or an error, never panic, and
// the prompt's text must hold the system message.
func FuzzHarmony(f *testing.F) {
	f.Add(`[{"role":"user","content":"hi"}]`, `[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":{"oneOf":[{"type":"string"},{"type":"array","items":{"type":"object"}}]}}}}}]`)
	f.Add(`[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"1"}]`, `[{"type":"function","name":"f","parameters":{"type":["a",1],"default":1e400}}]`)
	h := NewHarmonyChat(func() string { return "2025-03-07" })
	f.Fuzz(func(t *testing.T, input, tools string) {
		check := func(p *HarmonyPrompt, err error) {
			if err == nil && len(p.parts) < 3 {
				t.Fatalf("prompt without its system message: %q", p.String())
			}
		}
		check(h.Render(ChatRequest{Messages: json.RawMessage(input), Tools: json.RawMessage(tools)}))
		check(h.RenderResponses(HarmonyResponsesRequest{Input: json.RawMessage(input), Tools: json.RawMessage(tools)}))
	})
}
