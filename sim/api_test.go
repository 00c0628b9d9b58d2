package sim

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/warmroute/warmroute/api"
)

// apiCases are requests both the JSON and the streaming tests send.
var apiCases = []struct {
	name       string
	path       string
	body       string // %s is replaced by the stream fields
	wantPrompt int
	wantOut    int
}{
	{"completion text", "/v1/completions", `{"model":"sim-model","prompt":"hello world"%s}`, 2, DefaultMaxTokens},
	{"completion ids", "/v1/completions", `{"model":"m2","prompt":[5,6,7],"max_tokens":3%s}`, 3, 3},
	{"completion one token", "/v1/completions", `{"model":"m2","prompt":"x","max_tokens":1%s}`, 1, 1},
	{"chat", "/v1/chat/completions", `{"model":"sim-model","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":4%s}`,
		len(WordTokenizer{}.Encode("<|user|>\nhi\n<|assistant|>\n")), 4},
	{"chat deprecated max_tokens", "/v1/chat/completions", `{"model":"m2","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}],"max_tokens":2%s}`,
		len(WordTokenizer{}.Encode("<|system|>\nbe brief\n<|user|>\nhi\n<|assistant|>\n")), 2},
}

var testModels = []string{"sim-model", "m2"}

func body(tmpl, streamFields string) string { return strings.Replace(tmpl, "%s", streamFields, 1) }

func TestJSONResponses(t *testing.T) {
	_, ts := startServer(t, Options{ID: "sim-a", Models: testModels})
	for _, tt := range apiCases {
		t.Run(tt.name, func(t *testing.T) {
			resp := post(t, ts.URL, tt.path, body(tt.body, ""), nil)
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, raw)
			}
			if got := resp.Header.Get(api.ServedByHeader); got != "sim-a" {
				t.Errorf("%s = %q, want sim-a", api.ServedByHeader, got)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			r := decodeResponse(t, raw)
			checkObject(t, r, tt.path, false)
			if len(r.Choices) != 1 || r.Choices[0].FinishReason == nil || *r.Choices[0].FinishReason != "length" {
				t.Fatalf("choices = %s", raw)
			}
			if n := len(strings.Fields(r.text())); n != tt.wantOut {
				t.Errorf("generated %d words, want %d: %q", n, tt.wantOut, r.text())
			}
			checkUsage(t, r, tt.wantPrompt, tt.wantOut, false)
		})
	}
}

func TestStreamingResponses(t *testing.T) {
	_, ts := startServer(t, Options{ID: "sim-a", Models: testModels})
	for _, tt := range apiCases {
		for _, includeUsage := range []bool{false, true} {
			name := tt.name
			if includeUsage {
				name += " with usage"
			}
			t.Run(name, func(t *testing.T) {
				fields := `,"stream":true`
				if includeUsage {
					fields += `,"stream_options":{"include_usage":true}`
				}
				resp := post(t, ts.URL, tt.path, body(tt.body, fields), nil)
				defer resp.Body.Close()
				if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
					t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
				}
				if got := resp.Header.Get(api.ServedByHeader); got != "sim-a" {
					t.Errorf("%s = %q, want sim-a", api.ServedByHeader, got)
				}
				chunks := readSSE(t, resp.Body)
				text := checkChunks(t, chunks, tt.path, tt.wantOut, includeUsage)
				if includeUsage {
					checkUsage(t, chunks[len(chunks)-1], tt.wantPrompt, tt.wantOut, false)
				}
				whole := post(t, ts.URL, tt.path, body(tt.body, ""), nil)
				raw, _ := io.ReadAll(whole.Body)
				whole.Body.Close()
				if want := decodeResponse(t, raw).text(); text != want {
					t.Fatalf("streamed text %q differs from JSON text %q", text, want)
				}
			})
		}
	}
}

// checkChunks checks the chunk sequence of one stream and returns its text:
// chat opens with a role-only delta, exactly the last token chunk carries a
// finish reason, all chunks share one id, and a usage chunk with no choices
// ends the stream exactly when asked for.
func checkChunks(t *testing.T, chunks []response, path string, wantOut int, includeUsage bool) string {
	t.Helper()
	if includeUsage {
		last := chunks[len(chunks)-1]
		if len(last.Choices) != 0 || last.Usage == nil {
			t.Fatalf("last chunk is not a usage chunk: %+v", last)
		}
		chunks = chunks[:len(chunks)-1]
	}
	if strings.Contains(path, "chat") {
		if len(chunks) == 0 || chunks[0].Choices[0].Delta == nil || chunks[0].Choices[0].Delta.Role != "assistant" {
			t.Fatalf("chat stream does not open with the assistant role: %+v", chunks)
		}
		chunks = chunks[1:]
	}
	if len(chunks) != wantOut {
		t.Fatalf("%d token chunks, want %d", len(chunks), wantOut)
	}
	var text strings.Builder
	for i, c := range chunks {
		checkObject(t, c, path, true)
		if c.ID != chunks[0].ID {
			t.Fatalf("chunk %d id %q, first was %q", i, c.ID, chunks[0].ID)
		}
		if c.Usage != nil {
			t.Fatalf("token chunk %d carries usage", i)
		}
		final := c.Choices[0].FinishReason != nil
		if final != (i == len(chunks)-1) || (final && *c.Choices[0].FinishReason != "length") {
			t.Fatalf("chunk %d of %d: finish_reason %v", i, len(chunks), c.Choices[0].FinishReason)
		}
		text.WriteString(c.text())
	}
	return text.String()
}

func checkObject(t *testing.T, r response, path string, chunk bool) {
	t.Helper()
	wantObject, wantPrefix := "text_completion", "cmpl-"
	if strings.Contains(path, "chat") {
		wantObject, wantPrefix = "chat.completion", "chatcmpl-"
		if chunk {
			wantObject += ".chunk"
		}
	}
	if r.Object != wantObject || !strings.HasPrefix(r.ID, wantPrefix) || r.Model == "" {
		t.Fatalf("object %q id %q model %q; want object %q, id prefix %q", r.Object, r.ID, r.Model, wantObject, wantPrefix)
	}
}

func checkUsage(t *testing.T, r response, prompt, out int, details bool) {
	t.Helper()
	u := r.Usage
	if u == nil {
		t.Fatal("no usage")
	}
	if u.PromptTokens != prompt || u.CompletionTokens != out || u.TotalTokens != prompt+out {
		t.Errorf("usage %d+%d=%d, want %d+%d=%d", u.PromptTokens, u.CompletionTokens, u.TotalTokens, prompt, out, prompt+out)
	}
	hasDetails := u.PromptTokensDetails != nil && u.PromptTokensDetails.CachedTokens != nil
	if hasDetails != details {
		t.Fatalf("prompt_tokens_details present = %v, want %v", hasDetails, details)
	}
	if details && *u.PromptTokensDetails.CachedTokens != 0 {
		t.Errorf("cached_tokens = %d without a prefix cache", *u.PromptTokensDetails.CachedTokens)
	}
}

// chatA is the prompt length of one user message "a".
var chatA = len(WordTokenizer{}.Encode("<|user|>\na\n<|assistant|>\n"))

func TestPromptTokensDetails(t *testing.T) {
	_, ts := startServer(t, Options{PromptTokensDetails: true})
	tests := []struct {
		name, path, body string
		stream           bool
		prompt           int
	}{
		{"completion", "/v1/completions", `{"model":"sim-model","prompt":"a b","max_tokens":2}`, false, 2},
		{"chat", "/v1/chat/completions", `{"model":"sim-model","messages":[{"role":"user","content":"a"}],"max_tokens":2}`, false, chatA},
		{"completion stream", "/v1/completions", `{"model":"sim-model","prompt":"a b","max_tokens":2,"stream":true,"stream_options":{"include_usage":true}}`, true, 2},
		{"chat stream", "/v1/chat/completions", `{"model":"sim-model","messages":[{"role":"user","content":"a"}],"max_tokens":2,"stream":true,"stream_options":{"include_usage":true}}`, true, chatA},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := post(t, ts.URL, tt.path, tt.body, nil)
			defer resp.Body.Close()
			var r response
			if tt.stream {
				chunks := readSSE(t, resp.Body)
				r = chunks[len(chunks)-1]
			} else {
				raw, _ := io.ReadAll(resp.Body)
				r = decodeResponse(t, raw)
			}
			checkUsage(t, r, tt.prompt, 2, true)
		})
	}
}
