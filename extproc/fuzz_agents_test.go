package extproc

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/warmroute/warmroute/scorer"
)

// addGoldenBodies seeds a fuzz target with the golden shapes of one API.
func addGoldenBodies(f *testing.F, api string) {
	b, err := os.ReadFile("testdata/agents_golden.json")
	if err != nil {
		f.Fatal(err)
	}
	var g map[string]json.RawMessage
	if err := json.Unmarshal(b, &g); err != nil {
		f.Fatal(err)
	}
	var cases map[string]agentsGoldenCase
	if err := json.Unmarshal(g[api], &cases); err != nil {
		f.Fatal(err)
	}
	for _, c := range cases {
		f.Add([]byte(c.Body))
	}
}

// checkAgentParse: a parse never panics; success yields a chat request
// whose every message, tools and kwargs are JSON the renderer can read, or
// a load-only request; failure is a 400-class error.
func checkAgentParse(t *testing.T, path string, body []byte) {
	req, _, err := parseRequest(path, body)
	if err != nil {
		if !isBadRequest(err) {
			t.Fatalf("error %v is not a bad request", err)
		}
		return
	}
	if req.Kind == scorer.KindOther {
		return
	}
	if len(req.Messages) == 0 {
		t.Fatal("a chat request without messages")
	}
	for i, m := range req.Messages {
		if !json.Valid(m.Raw) || m.Role == "" {
			t.Fatalf("message %d: role %q, raw %q", i, m.Role, m.Raw)
		}
	}
	for _, raw := range [][]byte{req.Tools, req.ChatTemplateKwargs} {
		if len(raw) > 0 && !json.Valid(raw) {
			t.Fatalf("invalid JSON %q", raw)
		}
	}
}

func FuzzParseResponses(f *testing.F) {
	addGoldenBodies(f, "responses")
	f.Fuzz(func(t *testing.T, body []byte) { checkAgentParse(t, pathResponses, body) })
}

func FuzzParseMessages(f *testing.F) {
	addGoldenBodies(f, "messages")
	f.Fuzz(func(t *testing.T, body []byte) { checkAgentParse(t, pathMessages, body) })
}

// FuzzAgentUsage: usage and id readers never panic on any body, and never
// report usage whose cached count exceeds the prompt.
func FuzzAgentUsage(f *testing.F) {
	f.Add([]byte(respJSON), false, uint8(1))
	f.Add([]byte(event("message_delta", msgDelta)), true, uint8(2))
	f.Add([]byte(event("response.created", respCreated)+event("response.completed", respCompleted)), true, uint8(1))
	f.Fuzz(func(t *testing.T, body []byte, sse bool, d uint8) {
		r := newUsageReader(sse, 1<<16).forAPI(dialect(d%3), func(string, bool) {})
		r.write(body)
		if u := r.finish(); u.known && (u.cached < 0 || u.cached > u.prompt) {
			t.Fatalf("usage %+v", u)
		}
	})
}
