package extproc_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/warmroute/warmroute/affinity"
	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/extproc"
	"github.com/warmroute/warmroute/internal/testclock"
	"github.com/warmroute/warmroute/scorer"
)

// TestAgentRejections: each API's bad input gets that API's error body.
func TestAgentRejections(t *testing.T) {
	for _, tc := range []struct {
		name, path, body string
		status           int
		anthropicType    string // empty: an OpenAI error body
		param            string
	}{
		{"messages malformed", "/v1/messages", `{"model":`, 400, "invalid_request_error", ""},
		{"messages no model", "/v1/messages", `{"messages":[{"role":"user","content":"x"}]}`, 400, "invalid_request_error", ""},
		{"messages empty", "/v1/messages", `{"model":"m","messages":[]}`, 400, "invalid_request_error", ""},
		{"messages unknown block", "/v1/messages", `{"model":"m","messages":[{"role":"user","content":[{"type":"video"}]}]}`, 400, "invalid_request_error", ""},
		{"messages unknown model", "/v1/messages", `{"model":"nope","messages":[{"role":"user","content":"x"}]}`, 404, "not_found_error", ""},
		{"messages too large", "/v1/messages", `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("x", 2000) + `"}]}`, 413, "request_too_large", ""},
		{"messages no endpoint", "/v1/messages", `{"model":"empty","messages":[{"role":"user","content":"x"}]}`, 503, "overloaded_error", ""},
		{"responses no input", "/v1/responses", `{"model":"m"}`, 400, "", "input"},
		{"responses bad item", "/v1/responses", `{"model":"m","input":[{"type":"item_reference","id":"x"}]}`, 400, "", "input[0].type"},
		{"responses encrypted reasoning", "/v1/responses", `{"model":"m","input":[{"type":"reasoning","summary":[],"encrypted_content":"e"}]}`, 400, "", "input[0].encrypted_content"},
		{"responses unknown model", "/v1/responses", `{"model":"nope","input":"x"}`, 404, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessConfig{opts: extproc.Options{Config: extproc.Config{MaxBodyBytes: 1024}}})
			s := h.open()
			s.send(first(reqHeaders(tc.path, false), buffered, none))
			s.recv()
			s.send(reqBody([]byte(tc.body), true))
			ir := s.recv().GetImmediateResponse()
			if ir == nil || int(ir.GetStatus().GetCode()) != tc.status {
				t.Fatalf("answer %v, want status %d", ir, tc.status)
			}
			if tc.anthropicType != "" {
				var b struct {
					Type  string `json:"type"`
					Error struct {
						Type    string `json:"type"`
						Message string `json:"message"`
					} `json:"error"`
				}
				if err := json.Unmarshal(ir.GetBody(), &b); err != nil || b.Type != "error" ||
					b.Error.Type != tc.anthropicType || b.Error.Message == "" {
					t.Fatalf("body %s, want an Anthropic %s error", ir.GetBody(), tc.anthropicType)
				}
				return
			}
			var b api.ErrorResponse
			if err := json.Unmarshal(ir.GetBody(), &b); err != nil || b.Error.Message == "" || b.Error.Code != tc.status {
				t.Fatalf("body %s, want an OpenAI error", ir.GetBody())
			}
			if p := b.Error.Param; (p == nil) != (tc.param == "") || p != nil && *p != tc.param {
				t.Errorf("param = %v, want %q", p, tc.param)
			}
		})
	}
}

// respond plays a routed Responses request's 200 answer.
func respond(s *session, body string) {
	s.send(respHeaders(false))
	s.recv()
	s.send(respBody([]byte(body), true))
	s.recv()
}

func routeResponses(t *testing.T, h *harness, body string) (string, *session) {
	t.Helper()
	s := h.open()
	s.send(first(reqHeaders("/v1/responses", false), buffered, streamed))
	s.recv()
	s.send(reqBody([]byte(body), true))
	r := s.recv()
	if ir := r.GetImmediateResponse(); ir != nil {
		return "", s
	}
	return routing(t, r, r.GetRequestBody().GetResponse()), s
}

// TestResponsesAffinity: the id a response reports (its first SSE event)
// routes every follow-up to the endpoint that produced it; an id stored by
// no endpoint gets vLLM's 404 once the table is complete; store false
// learns nothing.
func TestResponsesAffinity(t *testing.T) {
	clk := testclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	store := affinity.New(affinity.Config{MaxAge: api.Duration(time.Hour)}, affinity.Options{Now: clk.Now})
	clk.Advance(time.Hour) // complete: the router has run for a window
	load := &scorer.Load{}
	picker := scorer.New(scorer.NewPools(testPools, ""), load, scorer.Options{Affinity: store})
	h := newHarness(t, harnessConfig{picker: picker})
	h.load = load

	ep, s := routeResponses(t, h, `{"model":"m","input":"hi","stream":true}`)
	respond(s, "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\",\"store\":true}}\n\n")
	for i := range 20 {
		got, s := routeResponses(t, h, `{"model":"m","previous_response_id":"resp_1","input":"more"}`)
		if got != ep {
			t.Fatalf("follow-up %d went to %s, the response is on %s", i, got, ep)
		}
		respond(s, `{"id":"resp_x`+itoa(i)+`","store":false}`)
	}
	_, s = routeResponses(t, h, `{"model":"m","previous_response_id":"resp_x0","input":"more"}`)
	_ = s
	if store.Len() != 1 {
		t.Fatalf("store holds %d ids, want 1 (store false responses are not learnt)", store.Len())
	}
	s = h.open()
	s.send(first(reqHeaders("/v1/responses", false), buffered, streamed))
	s.recv()
	s.send(reqBody([]byte(`{"model":"m","previous_response_id":"resp_nope","input":"x"}`), true))
	code, body := immediate(t, s.recv())
	if code != 404 || body.Error.Message != "Response with id 'resp_nope' not found." ||
		body.Error.Param == nil || *body.Error.Param != "response_id" || body.Error.Type != "invalid_request_error" {
		t.Fatalf("unknown id: %d %+v", code, body.Error)
	}
	if got := h.requestsTotal("response_not_found"); got != 2 {
		t.Fatalf("requests_total{response_not_found} = %v, want 2 (resp_x0 and resp_nope)", got)
	}
}
