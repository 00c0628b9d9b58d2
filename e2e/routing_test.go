package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/openai"
)

// openAIResponse is the part of a completion or chat completion the tests
// look at; stream chunks are read with openai.DecodeChunk.
type openAIResponse struct {
	Choices []struct {
		Text    string `json:"text"`
		Message *struct {
			Content string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens int `json:"prompt_tokens"`
	} `json:"usage"`
}

// twoMB is a prompt of about 2 MB: large enough to need many ext_proc body
// chunks and more than gRPC's default 4 MiB once doubled, varied enough that
// a lost or reordered chunk changes the simulator's token count.
var twoMB = func() string {
	var b strings.Builder
	for i := 0; b.Len() < 2<<20; i++ {
		b.WriteString("word")
		b.WriteByte(byte('a' + i%26))
		b.WriteByte(' ')
	}
	return b.String()
}()

func TestRouting(t *testing.T) {
	tests := []struct {
		name   string
		path   string
		body   map[string]any // nil: GET without a body
		stream bool
	}{
		{name: "completions", path: "/v1/completions", body: completionRequest("Hello there, model.", false)},
		{name: "completions stream", path: "/v1/completions", body: completionRequest("Stream to me.", true), stream: true},
		{name: "chat", path: "/v1/chat/completions", body: chatRequest("What is a KV cache?", false)},
		{name: "chat stream", path: "/v1/chat/completions", body: chatRequest("Stream a chat.", true), stream: true},
		{name: "chat stream with usage", path: "/v1/chat/completions", stream: true,
			body: withField(chatRequest("Count my tokens.", true), "stream_options", map[string]bool{"include_usage": true})},
		{name: "completions 2MB", path: "/v1/completions", body: completionRequest(twoMB, false)},
		{name: "chat 2MB stream", path: "/v1/chat/completions", body: chatRequest(twoMB, true), stream: true},
		{name: "models (headers only)", path: "/v1/models"},
	}
	for _, mode := range modes {
		t.Run(modeName(mode), func(t *testing.T) {
			st := newStack(t, harness.Options{Template: mode})
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					if tt.body == nil {
						checkModels(t, st, mustDo(t, http.MethodGet, st.URL(tt.path), nil, nil))
						return
					}
					body := mustJSON(t, tt.body)
					r := mustDo(t, http.MethodPost, st.URL(tt.path), body, nil)
					checkRouted(t, st, r)
					got := checkGeneration(t, r, tt.stream, tt.body["stream_options"] != nil)
					// The same body sent straight to a simulator must count the
					// same prompt tokens: proof that Envoy delivered the body
					// the router streamed back intact.
					direct := mustDo(t, http.MethodPost, "http://"+st.Sims[0].Addr+tt.path, body, nil)
					if want := checkGeneration(t, direct, tt.stream, tt.body["stream_options"] != nil); got != want {
						t.Fatalf("prompt tokens through Envoy = %d, sent directly = %d", got, want)
					}
				})
			}
			routed := scrape(t, st).Sum("warmroute_extproc_requests_total", map[string]string{"outcome": "routed"})
			if routed < float64(len(tests)) {
				t.Fatalf("router counted %v routed requests, want at least %d", routed, len(tests))
			}
		})
	}
}

func withField(m map[string]any, k string, v any) map[string]any {
	m[k] = v
	return m
}

// checkRouted checks a successful answer that went through the router.
func checkRouted(t *testing.T, st *harness.Stack, r result) {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status = %v, want 200", r)
	}
	servedBy(t, st, r)
	if d := r.header.Get("x-warmroute-decision"); d != "" {
		t.Errorf("response carries x-warmroute-decision %q by default; it goes to the engine only", d)
	}
}

// checkGeneration checks the body of a completion and returns its
// usage.prompt_tokens (-1 when the response carries no usage).
func checkGeneration(t *testing.T, r result, stream, wantStreamUsage bool) int {
	t.Helper()
	if !stream {
		var resp openAIResponse
		if err := json.Unmarshal(r.body, &resp); err != nil {
			t.Fatalf("decoding response %v: %v", r, err)
		}
		if len(resp.Choices) == 0 || resp.Usage == nil || resp.Usage.PromptTokens == 0 {
			t.Fatalf("response lacks choices or usage: %v", r)
		}
		return resp.Usage.PromptTokens
	}
	return checkStream(t, r, wantStreamUsage)
}

func checkStream(t *testing.T, r result, wantUsage bool) int {
	t.Helper()
	events, err := openai.ReadEvents(bytes.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	if len(events) < 2 || !openai.IsDone(events[len(events)-1]) {
		t.Fatalf("stream does not end with [DONE] after chunks: %q", events)
	}
	tokens, text := -1, ""
	for _, e := range events[:len(events)-1] {
		chunk, err := openai.DecodeChunk(e)
		if err != nil {
			t.Fatalf("decoding chunk %q: %v", e, err)
		}
		for _, c := range chunk.Choices {
			text += c.Text
			if c.Delta != nil {
				text += c.Delta.Content
			}
		}
		if chunk.Usage != nil {
			tokens = chunk.Usage.Prompt()
		}
	}
	if text == "" {
		t.Fatalf("stream generated no text: %q", events)
	}
	if wantUsage && tokens <= 0 {
		t.Fatalf("stream_options.include_usage set but no usage chunk: %q", events)
	}
	return tokens
}

func checkModels(t *testing.T, st *harness.Stack, r result) {
	t.Helper()
	checkRouted(t, st, r)
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(r.body, &list); err != nil || len(list.Data) == 0 || list.Data[0].ID != model {
		t.Fatalf("GET /v1/models = %v (decode error %v), want a list holding %q", r, err, model)
	}
}
