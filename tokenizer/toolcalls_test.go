package tokenizer

import (
	"encoding/json"
	"errors"
	"testing"
)

// Tool calls reach the template as vLLM passes them (VLLMVersion).
func TestNormalizeToolCalls(t *testing.T) {
	const tmpl = `{% for m in messages %}{% if m.tool_calls is defined %}` +
		`{% for c in m.tool_calls %}{{ c.function.arguments | tojson }};{% endfor %}` +
		`{% else %}-{% endif %}{% endfor %}`
	call := func(role, args string) string {
		return `[{"role":"` + role + `","content":null,"tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":` + args + `}}]}]`
	}
	tests := []struct {
		name     string
		messages string
		want     string
	}{
		{"compact string re-serialised", call("assistant", `"{\"a\":1,\"b\":[true,null]}"`), `{"a": 1, "b": [true, null]};`},
		{"key order kept", call("assistant", `"{\"z\":1,\"a\":2}"`), `{"z": 1, "a": 2};`},
		{"not JSON is an empty object", call("assistant", `"city=Paris"`), `{};`},
		{"empty string is an empty object", call("assistant", `""`), `{};`},
		{"JSON scalar string is an empty object", call("assistant", `"3"`), `{};`},
		{"JSON list string is an empty object", call("assistant", `"[1, 2]"`), `{};`},
		{"big integer kept exact", call("assistant", `"{\"n\": 123456789012345678901234567890}"`), `{"n": 123456789012345678901234567890};`},
		{"other roles carry no tool calls", call("user", `"{\"a\":1}"`), `-`},
		{"empty list removed", `[{"role":"assistant","content":"x","tool_calls":[]}]`, `-`},
	}
	ct, err := NewChatTemplate(tmpl, "", "")
	if err != nil {
		t.Fatal(err)
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

// Calls vLLM's request model rejects are errors, not a guessed render.
func TestNormalizeToolCallsRejects(t *testing.T) {
	ct, err := NewChatTemplate(`{{ messages | tojson }}`, "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, calls := range []string{
		`[1]`,
		`[{"id":"1","type":"retrieval","function":{"name":"f","arguments":"{}"}}]`,
		`[{"id":"1","type":"function"}]`,
		`[{"id":"1","type":"function","function":{"name":"f","arguments":null}}]`,
		`[{"id":"1","type":"function","function":{"name":"f","arguments":{"q":"x"}}}]`,
		`[{"id":"1","type":"function","function":{"name":"f","arguments":3}}]`,
		`[{"id":"1","type":"function","function":{"name":"f"}}]`,
		`[{"id":"1","type":"function","function":{"name":2,"arguments":"{}"}}]`,
	} {
		t.Run(calls, func(t *testing.T) {
			msgs := `[{"role":"assistant","content":null,"tool_calls":` + calls + `}]`
			if _, err := ct.Render(ChatRequest{Messages: json.RawMessage(msgs)}); !errors.Is(err, ErrRequest) {
				t.Fatalf("Render error %v, want ErrRequest", err)
			}
		})
	}
}
