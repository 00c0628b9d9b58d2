package extproc

import (
	"strings"
	"testing"
)

// event builds one named SSE event, as vLLM's Responses and Messages
// streams write them.
func event(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }

const (
	respCreated   = `{"type":"response.created","sequence_number":0,"response":{"id":"resp_abc","object":"response","status":"in_progress","store":true,"usage":null}}`
	respDelta     = `{"type":"response.output_text.delta","sequence_number":1,"delta":"hi \"usage\": 3"}`
	respCompleted = `{"type":"response.completed","sequence_number":2,"response":{"id":"resp_abc","status":"completed","store":true,"usage":{"input_tokens":40,"input_tokens_details":{"cached_tokens":32,"cache_write_tokens":0,"input_tokens_per_turn":[],"cached_tokens_per_turn":[]},"output_tokens":3,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":43}}}`
	respJSON      = `{"id":"resp_j","object":"response","status":"completed","store":true,"output":[],"usage":{"input_tokens":20,"input_tokens_details":{"cached_tokens":16,"cache_write_tokens":0},"output_tokens":2,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":22}}`
	msgStart      = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":0,"cache_read_input_tokens":0}}}`
	msgDelta      = `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":8,"output_tokens":5,"cache_read_input_tokens":32}}`
)

// TestAgentUsage reads every API's usage from a JSON body and from its
// stream, split at every byte, and the Responses id from both.
func TestAgentUsage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		d      dialect
		sse    bool
		body   string
		want   usage
		wantID string
	}{
		{"responses stream", dialectResponses, true,
			event("response.created", respCreated) + event("response.output_text.delta", respDelta) + event("response.completed", respCompleted),
			usage{40, 32, true}, "resp_abc"},
		{"responses json", dialectResponses, false, respJSON, usage{20, 16, true}, "resp_j"},
		{"responses first turn of several", dialectResponses, false,
			`{"id":"resp_t","store":true,"usage":{"input_tokens":90,"input_tokens_details":{"cached_tokens":70,"input_tokens_per_turn":[30,60],"cached_tokens_per_turn":[10,60]}}}`,
			usage{30, 10, true}, "resp_t"},
		{"responses not stored", dialectResponses, false, strings.Replace(respJSON, `"store":true`, `"store":false`, 1),
			usage{20, 16, true}, ""},
		{"responses cached above input", dialectResponses, false,
			`{"id":"resp_x","usage":{"input_tokens":3,"input_tokens_details":{"cached_tokens":4}}}`, usage{}, "resp_x"},
		{"responses without usage", dialectResponses, true, event("response.created", respCreated), usage{}, "resp_abc"},
		{"responses error event", dialectResponses, true, event("error", `{"type":"error","message":"x"}`), usage{}, ""},
		{"messages stream: the delta's usage wins", dialectAnthropic, true,
			event("message_start", msgStart) + event("message_delta", msgDelta) + event("message_stop", `{"type":"message_stop"}`),
			usage{40, 32, true}, ""},
		{"messages json", dialectAnthropic, false,
			`{"id":"msg_1","type":"message","usage":{"input_tokens":4,"output_tokens":1,"cache_read_input_tokens":16,"cache_creation_input_tokens":2}}`,
			usage{22, 16, true}, ""},
		{"messages without cache fields", dialectAnthropic, false,
			`{"id":"msg_1","type":"message","usage":{"input_tokens":20,"output_tokens":1}}`, usage{}, ""},
		{"messages start only", dialectAnthropic, true, event("message_start", msgStart), usage{10, 0, true}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := []byte(tc.body)
			for i := 0; i <= len(b); i++ {
				var gotID string
				r := newUsageReader(tc.sse, 1<<20).forAPI(tc.d, func(id string, stored bool) {
					if gotID != "" {
						t.Fatal("the id was reported twice")
					}
					if stored {
						gotID = id
					}
				})
				r.write(b[:i])
				r.write(b[i:])
				if got := r.finish(); got != tc.want {
					t.Fatalf("split at %d: usage %+v, want %+v", i, got, tc.want)
				}
				if gotID != tc.wantID {
					t.Fatalf("split at %d: id %q, want %q", i, gotID, tc.wantID)
				}
			}
		})
	}
}
