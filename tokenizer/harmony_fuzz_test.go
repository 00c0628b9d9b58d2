package tokenizer

import (
	"encoding/json"
	"strconv"
	"strings"
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

// BenchmarkHarmony renders and encodes a 40-turn GPT-OSS conversation with
// tools, the whole prompt each time (a Harmony prompt bypasses the prefix
// cache: its texts are encoded one by one).
func BenchmarkHarmony(b *testing.B) {
	tk := loadFamily(b, "gptoss")
	h := NewHarmonyChat(func() string { return "2025-03-07" })
	msgs := []map[string]any{{"role": "system", "content": "You are terse."}}
	for i := range 40 {
		msgs = append(msgs, map[string]any{"role": "user", "content": strings.Repeat("Tell me about the weather in Paris today. ", 5) + strconv.Itoa(i)},
			map[string]any{"role": "assistant", "content": strings.Repeat("It is sunny and 21 degrees. ", 5)})
	}
	raw, _ := json.Marshal(msgs)
	tools := json.RawMessage(`[{"type":"function","function":{"name":"get_weather","description":"Weather","parameters":{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"array","items":{"type":"integer"}}},"required":["city"]}}}]`)
	req := ChatRequest{Messages: raw, Tools: tools}
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		p, err := h.Render(req)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tk.AppendHarmony(nil, p); err != nil {
			b.Fatal(err)
		}
	}
}
