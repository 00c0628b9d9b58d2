package sim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

func sizeName(n int) string { return strconv.Itoa(n) }

// startServer runs a simulator behind httptest and closes it with the test.
func startServer(t testing.TB, opts Options) (*Server, *httptest.Server) {
	t.Helper()
	s, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return s, ts
}

func post(t testing.TB, url, path, body string, headers map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	return resp
}

// response is the union of the fields tests read from either API's JSON
// responses and chunks.
type response struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Text    string `json:"text"`
		Message *struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"message"`
		Delta *struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		TotalTokens         int `json:"total_tokens"`
		PromptTokensDetails *struct {
			CachedTokens *int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    int    `json:"code"`
	} `json:"error"`
}

// text is the generated text of a response or chunk, whichever API.
func (r response) text() string {
	var b strings.Builder
	for _, c := range r.Choices {
		b.WriteString(c.Text)
		if c.Message != nil {
			b.WriteString(c.Message.Content)
		}
		if c.Delta != nil {
			b.WriteString(c.Delta.Content)
		}
	}
	return b.String()
}

func decodeResponse(t testing.TB, body []byte) response {
	t.Helper()
	var r response
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("decoding response %q: %v", body, err)
	}
	return r
}

// readSSE parses a complete event stream: it checks every event is a
// "data: " line followed by a blank line and that the last is [DONE].
func readSSE(t testing.TB, body io.Reader) []response {
	t.Helper()
	var chunks []response
	sc := bufio.NewScanner(body)
	sawDone := false
	for sc.Scan() {
		line := sc.Bytes()
		if sawDone {
			t.Fatalf("data after [DONE]: %q", line)
		}
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok {
			t.Fatalf("line %q is not a data event", line)
		}
		if !sc.Scan() || len(sc.Bytes()) != 0 {
			t.Fatalf("event %q not followed by a blank line", data)
		}
		if string(data) == "[DONE]" {
			sawDone = true
			continue
		}
		chunks = append(chunks, decodeResponse(t, data))
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading stream: %v", err)
	}
	if !sawDone {
		t.Fatal("stream ended without [DONE]")
	}
	return chunks
}

// waitGauges polls the server's engine gauges; see waitEngineGauges.
func waitGauges(t testing.TB, s *Server, running, waiting float64) {
	t.Helper()
	waitEngineGauges(t, s.engine, running, waiting)
}
