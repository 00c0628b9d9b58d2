package sim

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

func decodeMap(t *testing.T, r io.Reader) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.NewDecoder(r).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func num(m map[string]any, path ...string) float64 {
	var v any = m
	for _, p := range path {
		v = v.(map[string]any)[p]
	}
	return v.(float64)
}

// TestResponsesConversation: a stored response continues by id with its
// history cached, an unknown id is vLLM's 404, and a stream's first event
// names the id.
func TestResponsesConversation(t *testing.T) {
	_, ts := startServer(t, Options{Models: []string{"m"}, BlockSize: 4})
	resp := post(t, ts.URL, "/v1/responses", `{"model":"m","instructions":"Be brief.","input":"`+strings.Repeat("turn one words ", 20)+`","max_output_tokens":8}`, nil)
	first := decodeMap(t, resp.Body)
	id, _ := first["id"].(string)
	if resp.StatusCode != 200 || !strings.HasPrefix(id, "resp_") || first["store"] != true {
		t.Fatalf("first response %d %v", resp.StatusCode, first)
	}
	prompt1 := num(first, "usage", "input_tokens")
	resp = post(t, ts.URL, "/v1/responses", `{"model":"m","instructions":"Be brief.","previous_response_id":"`+id+`","input":"and more","max_output_tokens":8}`, nil)
	second := decodeMap(t, resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("follow-up %d %v", resp.StatusCode, second)
	}
	if p, c := num(second, "usage", "input_tokens"), num(second, "usage", "input_tokens_details", "cached_tokens"); p <= prompt1 || c == 0 {
		t.Fatalf("follow-up usage input %v cached %v; first input %v", p, c, prompt1)
	}
	resp = post(t, ts.URL, "/v1/responses", `{"model":"m","previous_response_id":"resp_nope","input":"x"}`, nil)
	nf := decodeMap(t, resp.Body)
	if resp.StatusCode != 404 || nf["error"].(map[string]any)["message"] != "Response with id 'resp_nope' not found." {
		t.Fatalf("unknown id: %d %v", resp.StatusCode, nf)
	}
	resp = post(t, ts.URL, "/v1/responses", `{"model":"m","input":"hi","stream":true,"max_output_tokens":4}`, nil)
	b, _ := io.ReadAll(resp.Body)
	if !strings.HasPrefix(string(b), "event: response.created\ndata: {") || !strings.Contains(string(b), "event: response.completed") {
		t.Fatalf("stream:\n%s", b)
	}
}

// TestMessagesUsage: cache_read_input_tokens only with prompt token details,
// input_tokens excluding it, in JSON and in the stream's message_delta.
func TestMessagesUsage(t *testing.T) {
	_, ts := startServer(t, Options{Models: []string{"m"}, BlockSize: 4, PromptTokensDetails: true})
	body := `{"model":"m","max_tokens":4,"system":"S","messages":[{"role":"user","content":"` + strings.Repeat("same words ", 30) + `"}]%s}`
	post(t, ts.URL, "/v1/messages", strings.Replace(body, "%s", "", 1), nil).Body.Close()
	resp := post(t, ts.URL, "/v1/messages", strings.Replace(body, "%s", "", 1), nil)
	m := decodeMap(t, resp.Body)
	if resp.StatusCode != 200 || num(m, "usage", "cache_read_input_tokens") == 0 || m["type"] != "message" {
		t.Fatalf("messages %d %v", resp.StatusCode, m)
	}
	resp = post(t, ts.URL, "/v1/messages", strings.Replace(body, "%s", `,"stream":true`, 1), nil)
	b, _ := io.ReadAll(resp.Body)
	if !strings.HasPrefix(string(b), "event: message_start\n") || !strings.Contains(string(b), `"cache_read_input_tokens"`) ||
		!strings.Contains(string(b), "event: message_stop") {
		t.Fatalf("stream:\n%s", b)
	}
	resp = post(t, ts.URL, "/v1/messages", `{"model":"m","messages":[]}`, nil)
	e := decodeMap(t, resp.Body)
	if resp.StatusCode != 400 || e["type"] != "error" {
		t.Fatalf("bad request: %d %v", resp.StatusCode, e)
	}
}
