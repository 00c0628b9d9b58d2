package extproc_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/warmroute/warmroute/extproc"
	"github.com/warmroute/warmroute/scorer"
)

type parseCase struct {
	name string
	path string
	body string
	want scorer.Request // BodyBytes and Messages[i].Raw are filled in or ignored
}

var parseCases = []parseCase{
	{"completion string prompt", "/v1/completions", `{"model":"m","prompt":"hello"}`,
		scorer.Request{Kind: scorer.KindCompletion, Model: "m", Prompts: []string{"hello"}}},
	{"completion string list", "/v1/completions", `{"model":"m","prompt":["a","b"]}`,
		scorer.Request{Kind: scorer.KindCompletion, Model: "m", Prompts: []string{"a", "b"}}},
	{"completion token ids", "/v1/completions", `{"model":"m","prompt":[1,2,3]}`,
		scorer.Request{Kind: scorer.KindCompletion, Model: "m", PromptTokenIDs: [][]int{{1, 2, 3}}}},
	{"completion token id lists", "/v1/completions", `{"model":"m","prompt":[[1,2],[3]]}`,
		scorer.Request{Kind: scorer.KindCompletion, Model: "m", PromptTokenIDs: [][]int{{1, 2}, {3}}}},
	{"completion with whitespace", "/v1/completions", " \n{ \"prompt\" : [ 7 ] , \"model\" : \"m\" }\n",
		scorer.Request{Kind: scorer.KindCompletion, Model: "m", PromptTokenIDs: [][]int{{7}}}},
	{"stream and cache salt", "/v1/completions", `{"model":"m","prompt":"p","stream":true,"cache_salt":"s1"}`,
		scorer.Request{Kind: scorer.KindCompletion, Model: "m", Prompts: []string{"p"}, Stream: true, CacheSalt: "s1"}},
	{"null optional fields", "/v1/completions", `{"model":"m","prompt":"p","stream":null,"cache_salt":null}`,
		scorer.Request{Kind: scorer.KindCompletion, Model: "m", Prompts: []string{"p"}}},
	{"query string ignored", "/v1/completions?api-version=2", `{"model":"m","prompt":"p"}`,
		scorer.Request{Kind: scorer.KindCompletion, Path: "/v1/completions", Model: "m", Prompts: []string{"p"}}},
	{"duplicate prompt, the string last", "/v1/completions", `{"model":"m","prompt":[1,2],"prompt":"p \u00e9\n"}`,
		scorer.Request{Kind: scorer.KindCompletion, Model: "m", Prompts: []string{"p \u00e9\n"}}},
	{"duplicate prompt, the list last", "/v1/completions", `{"model":"m","prompt":"p","prompt":[1,2]}`,
		scorer.Request{Kind: scorer.KindCompletion, Model: "m", PromptTokenIDs: [][]int{{1, 2}}}},
	{"duplicate model last wins", "/v1/completions", `{"model":"a","prompt":"p","model":"b"}`,
		scorer.Request{Kind: scorer.KindCompletion, Model: "b", Prompts: []string{"p"}}},
	{"unknown fields ignored", "/v1/completions", `{"model":"m","prompt":"p","max_tokens":5,"Model":3}`,
		scorer.Request{Kind: scorer.KindCompletion, Model: "m", Prompts: []string{"p"}}},
	{"chat string content", "/v1/chat/completions",
		`{"model":"c","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]}`,
		scorer.Request{Kind: scorer.KindChat, Model: "c", Messages: []scorer.Message{
			{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}}}},
	{"chat cache salt", "/v1/chat/completions",
		`{"model":"c","messages":[{"role":"user","content":"hi"}],"cache_salt":"tenant-7"}`,
		scorer.Request{Kind: scorer.KindChat, Model: "c", CacheSalt: "tenant-7", Messages: []scorer.Message{
			{Role: "user", Content: "hi"}}}},
	{"chat content parts", "/v1/chat/completions",
		`{"model":"c","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"b"}]}]}`,
		scorer.Request{Kind: scorer.KindChat, Model: "c", Messages: []scorer.Message{{Role: "user", Content: "a\nb"}}}},
	{"chat bare strings in a content list", "/v1/chat/completions",
		`{"model":"c","messages":[{"role":"user","content":["a",{"type":"text","text":"b"},"c"]}]}`,
		scorer.Request{Kind: scorer.KindChat, Model: "c", Messages: []scorer.Message{{Role: "user", Content: "a\nb\nc"}}}},
	{"chat empty texts left out of the join", "/v1/chat/completions",
		`{"model":"c","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":""},"","b"]}]}`,
		scorer.Request{Kind: scorer.KindChat, Model: "c", Messages: []scorer.Message{{Role: "user", Content: "a\nb"}}}},
	{"chat null content with tool calls", "/v1/chat/completions",
		`{"model":"c","messages":[{"role":"assistant","content":null,"tool_calls":[]},{"role":"user","content":"x"}]}`,
		scorer.Request{Kind: scorer.KindChat, Model: "c", Messages: []scorer.Message{{Role: "assistant"}, {Role: "user", Content: "x"}}}},
	{"chat tools and template kwargs", "/v1/chat/completions",
		`{"model":"c","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function"}],"chat_template_kwargs":{"enable_thinking":false},"stream":false}`,
		scorer.Request{Kind: scorer.KindChat, Model: "c", Messages: []scorer.Message{{Role: "user", Content: "x"}},
			Tools: []byte(`[{"type":"function"}]`), ChatTemplateKwargs: []byte(`{"enable_thinking":false}`)}},
	{"chat add_generation_prompt false", "/v1/chat/completions",
		`{"model":"c","messages":[{"role":"assistant","content":"x"}],"add_generation_prompt":false}`,
		scorer.Request{Kind: scorer.KindChat, Model: "c", Messages: []scorer.Message{{Role: "assistant", Content: "x"}}, NoGenerationPrompt: true}},
	{"chat add_generation_prompt true or null keeps it", "/v1/chat/completions",
		`{"model":"c","messages":[{"role":"user","content":"x"}],"add_generation_prompt":true,"add_generation_prompt":null}`,
		scorer.Request{Kind: scorer.KindChat, Model: "c", Messages: []scorer.Message{{Role: "user", Content: "x"}}}},
	{"completion ignores add_generation_prompt", "/v1/completions", `{"model":"m","prompt":"p","add_generation_prompt":"x"}`,
		scorer.Request{Kind: scorer.KindCompletion, Model: "m", Prompts: []string{"p"}}},
	{"stream options", "/v1/completions", `{"model":"m","prompt":"p","stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":false}}`,
		scorer.Request{Kind: scorer.KindCompletion, Model: "m", Prompts: []string{"p"}, Stream: true}},
	{"null stream options", "/v1/completions", `{"model":"m","prompt":"p","stream_options":null}`,
		scorer.Request{Kind: scorer.KindCompletion, Model: "m", Prompts: []string{"p"}}},
	{"completion add_special_tokens false", "/v1/completions", `{"model":"m","prompt":"hi","add_special_tokens":false}`,
		scorer.Request{Kind: scorer.KindCompletion, Model: "m", Prompts: []string{"hi"}, SpecialTokens: scorer.SpecialTokensOff}},
	{"completion add_special_tokens true", "/v1/completions", `{"model":"m","prompt":"hi","add_special_tokens":true}`,
		scorer.Request{Kind: scorer.KindCompletion, Model: "m", Prompts: []string{"hi"}, SpecialTokens: scorer.SpecialTokensOn}},
	{"add_special_tokens null keeps the default", "/v1/completions", `{"model":"m","prompt":"hi","add_special_tokens":null}`,
		scorer.Request{Kind: scorer.KindCompletion, Model: "m", Prompts: []string{"hi"}}},
	{"chat add_special_tokens true", "/v1/chat/completions",
		`{"model":"c","messages":[{"role":"user","content":"x"}],"add_special_tokens":true}`,
		scorer.Request{Kind: scorer.KindChat, Model: "c", Messages: []scorer.Message{{Role: "user", Content: "x"}}, SpecialTokens: scorer.SpecialTokensOn}},
	{"chat reasoning_effort", "/v1/chat/completions",
		`{"model":"c","messages":[{"role":"user","content":"x"}],"reasoning_effort":"none"}`,
		scorer.Request{Kind: scorer.KindChat, Model: "c", Messages: []scorer.Message{{Role: "user", Content: "x"}}, ReasoningEffort: "none"}},
	{"chat documents", "/v1/chat/completions",
		`{"model":"c","messages":[{"role":"user","content":"x"}],"documents":[{"text":"d"}]}`,
		scorer.Request{Kind: scorer.KindChat, Model: "c", Messages: []scorer.Message{{Role: "user", Content: "x"}}, Documents: []byte(`[{"text":"d"}]`)}},
	{"completion ignores reasoning_effort", "/v1/completions", `{"model":"m","prompt":"p","reasoning_effort":3}`,
		scorer.Request{Kind: scorer.KindCompletion, Model: "m", Prompts: []string{"p"}}},
	{"unknown path sniffs model", "/v1/embeddings", `{"input":"x","model":"e"}`,
		scorer.Request{Kind: scorer.KindOther, Model: "e"}},
	{"unknown path malformed body", "/v1/embeddings", `{"input":`,
		scorer.Request{Kind: scorer.KindOther}},
	{"unknown path non-string model", "/v1/embeddings", `{"model":3}`,
		scorer.Request{Kind: scorer.KindOther}},
	{"unknown path empty body", "/v1/models", ``,
		scorer.Request{Kind: scorer.KindOther}},
	{"unknown path nested model ignored", "/v1/audio", `{"meta":{"model":"inner"},"x":[1,{"model":"y"}]}`,
		scorer.Request{Kind: scorer.KindOther}},
}

func TestParseRequest(t *testing.T) {
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := extproc.ParseRequest(tc.path, []byte(tc.body))
			if err != nil {
				t.Fatalf("ParseRequest: %v", err)
			}
			want := tc.want
			if want.Path == "" {
				want.Path = tc.path
			}
			want.BodyBytes = len(tc.body)
			for i := range got.Messages {
				got.Messages[i].Raw = nil
			}
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("got  %+v\nwant %+v", *got, want)
			}
		})
	}
}

func TestParseRequestKeepsRawMessages(t *testing.T) {
	body := `{"model":"c","messages":[{"role":"user","content":"x","name":"bob"}]}`
	got, err := extproc.ParseRequest("/v1/chat/completions", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if raw := string(got.Messages[0].Raw); raw != `{"role":"user","content":"x","name":"bob"}` {
		t.Errorf("Raw = %s", raw)
	}
}

type parseErrorCase struct {
	name string
	path string
	body string
	want error
}

var parseErrorCases = []parseErrorCase{
	{"empty body", "/v1/completions", ``, extproc.ErrMalformedJSON},
	{"truncated", "/v1/completions", `{"model":"m","prompt":"p"`, extproc.ErrMalformedJSON},
	{"not an object", "/v1/completions", `["model"]`, extproc.ErrMalformedJSON},
	{"null body", "/v1/chat/completions", `null`, extproc.ErrMalformedJSON},
	{"trailing garbage", "/v1/completions", `{"model":"m","prompt":"secret"} x`, extproc.ErrMalformedJSON},
	{"invalid utf8", "/v1/completions", "{\"model\":\"m\",\"prompt\":\"secret\xff\"}", extproc.ErrMalformedJSON},
	{"invalid escape in the prompt", "/v1/completions", `{"model":"m","prompt":"secret\q"}`, extproc.ErrMalformedJSON},
	{"unterminated prompt", "/v1/completions", `{"model":"m","prompt":"secret`, extproc.ErrMalformedJSON},
	{"missing model", "/v1/completions", `{"prompt":"p"}`, extproc.ErrMissingModel},
	{"add_generation_prompt not a boolean", "/v1/chat/completions",
		`{"model":"c","messages":[{"role":"user","content":"x"}],"add_generation_prompt":"no"}`, extproc.ErrWrongType},
	{"add_special_tokens not a boolean", "/v1/completions", `{"model":"m","prompt":"p","add_special_tokens":"no"}`, extproc.ErrWrongType},
	{"documents not a list", "/v1/chat/completions",
		`{"model":"c","messages":[{"role":"user","content":"x"}],"documents":{}}`, extproc.ErrWrongType},
	{"reasoning_effort not a string", "/v1/chat/completions",
		`{"model":"c","messages":[{"role":"user","content":"x"}],"reasoning_effort":1}`, extproc.ErrWrongType},
	{"stream_options not an object", "/v1/completions", `{"model":"m","prompt":"p","stream_options":true}`, extproc.ErrWrongType},
	{"include_usage not a boolean", "/v1/completions", `{"model":"m","prompt":"p","stream_options":{"include_usage":1}}`, extproc.ErrWrongType},
	{"null model", "/v1/completions", `{"model":null,"prompt":"p"}`, extproc.ErrMissingModel},
	{"empty model", "/v1/completions", `{"model":"","prompt":"p"}`, extproc.ErrMissingModel},
	{"numeric model", "/v1/chat/completions", `{"model":7,"messages":[{"role":"user","content":"x"}]}`, extproc.ErrMissingModel},
	{"model case differs", "/v1/completions", `{"Model":"m","prompt":"p"}`, extproc.ErrMissingModel},
	{"missing prompt", "/v1/completions", `{"model":"m"}`, extproc.ErrEmptyPrompt},
	{"null prompt", "/v1/completions", `{"model":"m","prompt":null}`, extproc.ErrEmptyPrompt},
	{"empty string prompt", "/v1/completions", `{"model":"m","prompt":""}`, extproc.ErrEmptyPrompt},
	{"empty list prompt", "/v1/completions", `{"model":"m","prompt":[ ]}`, extproc.ErrEmptyPrompt},
	{"empty string in list", "/v1/completions", `{"model":"m","prompt":["a",""]}`, extproc.ErrEmptyPrompt},
	{"empty token id list", "/v1/completions", `{"model":"m","prompt":[[1],[]]}`, extproc.ErrEmptyPrompt},
	{"numeric prompt", "/v1/completions", `{"model":"m","prompt":5}`, extproc.ErrWrongType},
	{"object prompt", "/v1/completions", `{"model":"m","prompt":{"a":1}}`, extproc.ErrWrongType},
	{"mixed string list", "/v1/completions", `{"model":"m","prompt":["secret",1]}`, extproc.ErrWrongType},
	{"mixed id list", "/v1/completions", `{"model":"m","prompt":[1,"a"]}`, extproc.ErrWrongType},
	{"fractional token id", "/v1/completions", `{"model":"m","prompt":[1,2.5]}`, extproc.ErrWrongType},
	{"negative token id", "/v1/completions", `{"model":"m","prompt":[1,-2]}`, extproc.ErrWrongType},
	{"null token id", "/v1/completions", `{"model":"m","prompt":[1,null]}`, extproc.ErrWrongType},
	{"list of objects", "/v1/completions", `{"model":"m","prompt":[{}]}`, extproc.ErrWrongType},
	{"nested non-list", "/v1/completions", `{"model":"m","prompt":[[1],2]}`, extproc.ErrWrongType},
	{"string stream", "/v1/completions", `{"model":"m","prompt":"p","stream":"yes"}`, extproc.ErrWrongType},
	{"numeric cache salt", "/v1/completions", `{"model":"m","prompt":"p","cache_salt":1}`, extproc.ErrWrongType},
	{"missing messages", "/v1/chat/completions", `{"model":"c"}`, extproc.ErrEmptyMessages},
	{"empty messages", "/v1/chat/completions", `{"model":"c","messages":[]}`, extproc.ErrEmptyMessages},
	{"messages object", "/v1/chat/completions", `{"model":"c","messages":{"role":"user"}}`, extproc.ErrWrongType},
	{"message not object", "/v1/chat/completions", `{"model":"c","messages":["hi"]}`, extproc.ErrWrongType},
	{"message without role", "/v1/chat/completions", `{"model":"c","messages":[{"content":"x"}]}`, extproc.ErrWrongType},
	{"numeric content", "/v1/chat/completions", `{"model":"c","messages":[{"role":"user","content":3}]}`, extproc.ErrWrongType},
	{"part neither string nor object", "/v1/chat/completions", `{"model":"c","messages":[{"role":"user","content":["x",3]}]}`, extproc.ErrWrongType},
	{"bad part among strings", "/v1/chat/completions", `{"model":"c","messages":[{"role":"user","content":["x",{"type":"text","text":1}]}]}`, extproc.ErrWrongType},
	{"part without type", "/v1/chat/completions", `{"model":"c","messages":[{"role":"user","content":[{"text":"x"}]}]}`, extproc.ErrWrongType},
	{"text part without text", "/v1/chat/completions", `{"model":"c","messages":[{"role":"user","content":[{"type":"text"}]}]}`, extproc.ErrWrongType},
	{"tools object", "/v1/chat/completions", `{"model":"c","messages":[{"role":"user","content":"x"}],"tools":{}}`, extproc.ErrWrongType},
	{"template kwargs list", "/v1/chat/completions", `{"model":"c","messages":[{"role":"user","content":"x"}],"chat_template_kwargs":[]}`, extproc.ErrWrongType},
}

func TestParseRequestErrors(t *testing.T) {
	for _, tc := range parseErrorCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := extproc.ParseRequest(tc.path, []byte(tc.body))
			if !errors.Is(err, tc.want) {
				t.Fatalf("ParseRequest = %+v, %v; want error %v", got, err, tc.want)
			}
			// Errors reach clients and debug logs; they must not echo prompts.
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error echoes the prompt: %v", err)
			}
		})
	}
}

// FuzzParseRequest checks that any body either parses into a request that
// names its model (for the OpenAI paths) or fails with a 400-class sentinel,
// and never panics.
func FuzzParseRequest(f *testing.F) {
	for _, tc := range parseCases {
		f.Add(tc.path, []byte(tc.body))
	}
	for _, tc := range parseErrorCases {
		f.Add(tc.path, []byte(tc.body))
	}
	f.Fuzz(func(t *testing.T, path string, body []byte) {
		req, err := extproc.ParseRequest(path, body)
		if err != nil {
			if !isParseError(err) {
				t.Fatalf("error %v matches no 400-class sentinel", err)
			}
			return
		}
		if req.BodyBytes != len(body) {
			t.Fatalf("BodyBytes = %d, want %d", req.BodyBytes, len(body))
		}
		switch req.Kind {
		case scorer.KindCompletion:
			if req.Model == "" || len(req.Prompts)+len(req.PromptTokenIDs) == 0 {
				t.Fatalf("completion without model or prompt: %+v", req)
			}
		case scorer.KindChat:
			if req.Model == "" || len(req.Messages) == 0 {
				t.Fatalf("chat without model or messages: %+v", req)
			}
		}
	})
}

func isParseError(err error) bool {
	for _, s := range []error{extproc.ErrMalformedJSON, extproc.ErrMissingModel,
		extproc.ErrEmptyPrompt, extproc.ErrEmptyMessages, extproc.ErrWrongType} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}
