package sim

import (
	"errors"
	"strings"
	"testing"
)

var completionDecodeTests = []struct {
	name    string
	body    string
	want    apiRequest
	wantErr error
}{
	{"string prompt", `{"model":"m","prompt":"hi there"}`,
		apiRequest{Request: Request{Model: "m", Prompt: "hi there"}}, nil},
	{"token ids", `{"model":"m","prompt":[1,2,3],"max_tokens":4}`,
		apiRequest{Request: Request{Model: "m", Tokens: []int{1, 2, 3}, MaxTokens: 4}}, nil},
	{"one-element string list", `{"model":"m","prompt":["hi"]}`,
		apiRequest{Request: Request{Model: "m", Prompt: "hi"}}, nil},
	{"one-element ids list", `{"model":"m","prompt":[[7,8]]}`,
		apiRequest{Request: Request{Model: "m", Tokens: []int{7, 8}}}, nil},
	{"stream with usage", `{"model":"m","prompt":"x","stream":true,"stream_options":{"include_usage":true}}`,
		apiRequest{Request: Request{Model: "m", Prompt: "x"}, Stream: true, IncludeUsage: true}, nil},
	{"include_usage ignored without stream", `{"model":"m","prompt":"x","stream_options":{"include_usage":true}}`,
		apiRequest{Request: Request{Model: "m", Prompt: "x"}}, nil},
	{"unknown fields ignored", `{"model":"m","prompt":"x","temperature":0.2,"n":1}`,
		apiRequest{Request: Request{Model: "m", Prompt: "x"}}, nil},
	{"not json", `{"model":`, apiRequest{}, ErrMalformedJSON},
	{"trailing garbage", `{"model":"m","prompt":"x"} x`, apiRequest{}, ErrMalformedJSON},
	{"array body", `[1]`, apiRequest{}, ErrMalformedJSON},
	{"wrong type", `{"model":3,"prompt":"x"}`, apiRequest{}, ErrMalformedJSON},
	{"null body", `null`, apiRequest{}, ErrMissingModel},
	{"missing model", `{"prompt":"x"}`, apiRequest{}, ErrMissingModel},
	{"missing prompt", `{"model":"m"}`, apiRequest{}, ErrEmptyPrompt},
	{"null prompt", `{"model":"m","prompt":null}`, apiRequest{}, ErrEmptyPrompt},
	{"empty prompt", `{"model":"m","prompt":""}`, apiRequest{}, ErrEmptyPrompt},
	{"empty list", `{"model":"m","prompt":[]}`, apiRequest{}, ErrEmptyPrompt},
	{"empty inner list", `{"model":"m","prompt":[[]]}`, apiRequest{}, ErrEmptyPrompt},
	{"negative token", `{"model":"m","prompt":[1,-2]}`, apiRequest{}, ErrInvalidRequest},
	{"float token", `{"model":"m","prompt":[1.5]}`, apiRequest{}, ErrMalformedJSON},
	{"object prompt", `{"model":"m","prompt":{"a":1}}`, apiRequest{}, ErrMalformedJSON},
	{"nested too deep", `{"model":"m","prompt":[["a"]]}`, apiRequest{}, ErrMalformedJSON},
	{"batch", `{"model":"m","prompt":["a","b"]}`, apiRequest{}, ErrUnsupported},
	{"zero max_tokens", `{"model":"m","prompt":"x","max_tokens":0}`, apiRequest{}, ErrBadMaxTokens},
	{"negative max_tokens", `{"model":"m","prompt":"x","max_tokens":-1}`, apiRequest{}, ErrBadMaxTokens},
	{"n above one", `{"model":"m","prompt":"x","n":2}`, apiRequest{}, ErrUnsupported},
}

func TestDecodeCompletion(t *testing.T) {
	for _, tt := range completionDecodeTests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeCompletion([]byte(tt.body))
			checkDecoded(t, got, err, tt.want, tt.wantErr)
		})
	}
}

var chatDecodeTests = []struct {
	name    string
	body    string
	want    apiRequest
	wantErr error
}{
	{"one user message", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		apiRequest{Request: Request{Model: "m", Prompt: "<|user|>\nhi\n<|assistant|>\n"}}, nil},
	{"content parts", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"x"}}]}]}`,
		apiRequest{Request: Request{Model: "m", Prompt: "<|user|>\na<image_url>\n<|assistant|>\n"}}, nil},
	{"tools and tool calls compacted", `{"model":"m","tools":[ {"type": "function"} ],"messages":[{"role":"assistant","content":null,"tool_calls":[ {"id": "c1"} ]},{"role":"tool","tool_call_id":"c1","content":"42"}]}`,
		apiRequest{Request: Request{Model: "m", Prompt: "<|tools|>[{\"type\":\"function\"}]\n<|assistant|>\n<|tool_calls|>[{\"id\":\"c1\"}]\n\n<|tool|> c1\n42\n<|assistant|>\n"}}, nil},
	{"name is rendered", `{"model":"m","messages":[{"role":"user","name":"ann","content":"x"}]}`,
		apiRequest{Request: Request{Model: "m", Prompt: "<|user|> ann\nx\n<|assistant|>\n"}}, nil},
	{"max_completion_tokens wins", `{"model":"m","max_tokens":3,"max_completion_tokens":5,"messages":[{"role":"user","content":"x"}]}`,
		apiRequest{Request: Request{Model: "m", Prompt: "<|user|>\nx\n<|assistant|>\n", MaxTokens: 5}}, nil},
	{"max_tokens alone", `{"model":"m","max_tokens":3,"messages":[{"role":"user","content":"x"}]}`,
		apiRequest{Request: Request{Model: "m", Prompt: "<|user|>\nx\n<|assistant|>\n", MaxTokens: 3}}, nil},
	{"stream", `{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`,
		apiRequest{Request: Request{Model: "m", Prompt: "<|user|>\nx\n<|assistant|>\n"}, Stream: true}, nil},
	{"not json", `{"model":"m","messages":[`, apiRequest{}, ErrMalformedJSON},
	{"missing model", `{"messages":[{"role":"user","content":"x"}]}`, apiRequest{}, ErrMissingModel},
	{"missing messages", `{"model":"m"}`, apiRequest{}, ErrEmptyPrompt},
	{"empty messages", `{"model":"m","messages":[]}`, apiRequest{}, ErrEmptyPrompt},
	{"null message", `{"model":"m","messages":[null]}`, apiRequest{}, ErrInvalidRequest},
	{"missing role", `{"model":"m","messages":[{"content":"x"}]}`, apiRequest{}, ErrInvalidRequest},
	{"numeric content", `{"model":"m","messages":[{"role":"user","content":3}]}`, apiRequest{}, ErrMalformedJSON},
	{"messages not a list", `{"model":"m","messages":"hi"}`, apiRequest{}, ErrMalformedJSON},
	{"zero max_completion_tokens", `{"model":"m","max_completion_tokens":0,"messages":[{"role":"user","content":"x"}]}`, apiRequest{}, ErrBadMaxTokens},
}

func TestDecodeChat(t *testing.T) {
	for _, tt := range chatDecodeTests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeChat([]byte(tt.body))
			checkDecoded(t, got, err, tt.want, tt.wantErr)
		})
	}
}

func TestFlattenChatIgnoresJSONFormatting(t *testing.T) {
	a, errA := decodeChat([]byte(`{"model":"m","tools":[{"type":"function","name":"f"}],"messages":[{"role":"user","content":"x"}]}`))
	b, errB := decodeChat([]byte("{\"model\":\"m\",\"tools\":[ {\n\"type\" : \"function\", \"name\":\"f\"} ],\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}"))
	if errA != nil || errB != nil {
		t.Fatalf("decoding: %v, %v", errA, errB)
	}
	if a.Prompt != b.Prompt {
		t.Fatalf("formatting changed the prompt:\n%q\n%q", a.Prompt, b.Prompt)
	}
}

func checkDecoded(t *testing.T, got apiRequest, err error, want apiRequest, wantErr error) {
	t.Helper()
	if wantErr != nil {
		if !errors.Is(err, wantErr) {
			t.Fatalf("error = %v, want %v", err, wantErr)
		}
		if !errors.Is(err, ErrInvalidRequest) {
			t.Fatalf("error %v does not wrap ErrInvalidRequest, so it would not be a 400", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got.Model != want.Model || got.Prompt != want.Prompt || !equalInts(got.Tokens, want.Tokens) ||
		got.MaxTokens != want.MaxTokens || got.Stream != want.Stream || got.IncludeUsage != want.IncludeUsage {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

// FuzzDecodeRequest feeds both decoders the same bytes: neither may panic,
// and every error must be a 400 (wrap ErrInvalidRequest).
func FuzzDecodeRequest(f *testing.F) {
	for _, tt := range completionDecodeTests {
		f.Add([]byte(tt.body))
	}
	for _, tt := range chatDecodeTests {
		f.Add([]byte(tt.body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for name, decode := range map[string]func([]byte) (apiRequest, error){
			"completion": decodeCompletion, "chat": decodeChat,
		} {
			r, err := decode(body)
			if err != nil {
				if !errors.Is(err, ErrInvalidRequest) {
					t.Fatalf("%s: error %v is not an invalid request", name, err)
				}
				continue
			}
			if r.Model == "" || (r.Prompt == "" && len(r.Tokens) == 0) || r.MaxTokens < 0 {
				t.Fatalf("%s: accepted an unusable request %+v", name, r)
			}
			if strings.Contains(name, "chat") && !strings.HasSuffix(r.Prompt, "<|assistant|>\n") {
				t.Fatalf("chat prompt lacks the generation marker: %q", r.Prompt)
			}
		}
	})
}
