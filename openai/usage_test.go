package openai

import (
	json "encoding/json/v2"
	"testing"
)

const (
	tokenEvent = `{"id":"c1","choices":[{"index":0,"text":"hi"}],"usage":null}`
	usageEvent = `{"id":"c1","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":8}}}`
)

// cachedPrompt is what CachedPrompt returned.
type cachedPrompt struct {
	prompt, cached int
	ok             bool
}

var usageCases = []struct {
	name    string
	body    string
	want    cachedPrompt
	present bool // DecodeUsage returns a usage
	err     bool
}{
	{name: "usage event", body: usageEvent, want: cachedPrompt{12, 8, true}, present: true},
	{name: "completion body", body: `{"id":"c","object":"text_completion","choices":[{"text":"hi"}],"usage":{"prompt_tokens":7,"total_tokens":9,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":4}}}`,
		want: cachedPrompt{7, 4, true}, present: true},
	{name: "usage first", body: `{"usage":{"prompt_tokens_details":{"cached_tokens":0},"prompt_tokens":7},"choices":[]}`,
		want: cachedPrompt{7, 0, true}, present: true},
	{name: "zero cached", body: `{"usage":{"prompt_tokens":5,"prompt_tokens_details":{"cached_tokens":0}}}`, want: cachedPrompt{5, 0, true}, present: true},
	{name: "all cached", body: `{"usage" :  {"prompt_tokens":3,"prompt_tokens_details":{"cached_tokens":3}}}`, want: cachedPrompt{3, 3, true}, present: true},
	{name: "duplicate member, last wins", body: `{"usage":{"prompt_tokens":1,"prompt_tokens":6,"prompt_tokens_details":{"cached_tokens":2}}}`,
		want: cachedPrompt{6, 2, true}, present: true},
	{name: "token event", body: tokenEvent},
	{name: "no details", body: `{"choices":[],"usage":{"prompt_tokens":7}}`, present: true},
	{name: "details null", body: `{"usage":{"prompt_tokens":7,"prompt_tokens_details":null}}`, present: true},
	{name: "cached absent", body: `{"usage":{"prompt_tokens":7,"prompt_tokens_details":{"audio_tokens":0}}}`, present: true},
	{name: "cached null", body: `{"usage":{"prompt_tokens":5,"prompt_tokens_details":{"cached_tokens":null}}}`, present: true},
	{name: "prompt absent", body: `{"usage":{"prompt_tokens_details":{"cached_tokens":0}}}`, present: true},
	{name: "negative cached", body: `{"usage":{"prompt_tokens":3,"prompt_tokens_details":{"cached_tokens":-1}}}`, present: true},
	{name: "negative prompt", body: `{"usage":{"prompt_tokens":-1,"prompt_tokens_details":{"cached_tokens":0}}}`, present: true},
	{name: "cached above prompt", body: `{"usage":{"prompt_tokens":3,"prompt_tokens_details":{"cached_tokens":4}}}`, present: true},
	{name: "no usage", body: `{"choices":[{"text":"usage"}]}`},
	{name: "nested usage is not top level", body: `{"choices":[{"usage":{"prompt_tokens":7,"prompt_tokens_details":{"cached_tokens":4}}}]}`},
	{name: "wrong types", body: `{"usage":{"prompt_tokens":"3","prompt_tokens_details":{"cached_tokens":1}}}`, err: true},
	{name: "usage not an object", body: `{"usage":7}`, err: true},
	{name: "truncated", body: `{"usage":{"prompt_tokens":7,"prompt_tokens_details":{"cached_tokens":4}}`, err: true},
	{name: "trailing garbage", body: `{"usage":{"prompt_tokens":7,"prompt_tokens_details":{"cached_tokens":4}}} x`, err: true},
	{name: "not an object", body: `[1,2]`, err: true},
	{name: "not json", body: `usage: everything`, err: true},
	{name: "empty", body: ``, err: true},
}

func TestDecodeUsage(t *testing.T) {
	for _, tc := range usageCases {
		t.Run(tc.name, func(t *testing.T) {
			u, err := DecodeUsage([]byte(tc.body))
			if (err != nil) != tc.err || (u != nil) != tc.present {
				t.Fatalf("DecodeUsage = %+v, %v; want present %v, error %v", u, err, tc.present, tc.err)
			}
			var got cachedPrompt
			got.prompt, got.cached, got.ok = u.CachedPrompt()
			if got != tc.want {
				t.Fatalf("CachedPrompt = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestUsageAccessors(t *testing.T) {
	seven, four := 7, 4
	tests := []struct {
		name   string
		u      *Usage
		prompt int
		cached *int
	}{
		{"nil", nil, 0, nil},
		{"empty", &Usage{}, 0, nil},
		{"prompt only", &Usage{PromptTokens: &seven}, 7, nil},
		{"details without cached", &Usage{PromptTokens: &seven, PromptTokensDetails: &PromptTokensDetails{}}, 7, nil},
		{"both", &Usage{PromptTokens: &seven, PromptTokensDetails: &PromptTokensDetails{CachedTokens: &four}}, 7, &four},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.u.Prompt(); got != tt.prompt {
				t.Errorf("Prompt = %d, want %d", got, tt.prompt)
			}
			if got := tt.u.Cached(); got != tt.cached {
				t.Errorf("Cached = %v, want %v", got, tt.cached)
			}
		})
	}
}

var hasUsageCases = []struct {
	name string
	data string
	want bool
}{
	{"usage object", usageEvent, true},
	{"usage null", tokenEvent, false},
	{"no usage", `{"choices":[{"text":"a"}]}`, false},
	{"usage word inside text", `{"choices":[{"text":"\"usage\": 5"}],"usage":null}`, false},
	{"string value usage", `{"choices":[{"text":"usage"}]}`, false},
	{"spaces around colon", `{"usage" :  {"prompt_tokens":3}}`, true},
	{"newline before colon", "{\"usage\"\n:\n{}}", true},
	{"null then object", `{"a":{"usage":null},"usage":{}}`, true},
	{"key at the end", `{"usage"`, false},
	{"usage not an object is still set", `{"usage":7}`, true},
	{"empty", ``, false},
}

func TestHasUsage(t *testing.T) {
	for _, tt := range hasUsageCases {
		t.Run(tt.name, func(t *testing.T) {
			if got := HasUsage([]byte(tt.data)); got != tt.want {
				t.Fatalf("HasUsage(%s) = %v, want %v", tt.data, got, tt.want)
			}
		})
	}
}

// TestUsageRoundTrip checks that what DecodeUsage reads marshals back to an
// object that reads the same and that HasUsage finds.
func TestUsageRoundTrip(t *testing.T) {
	for _, tc := range usageCases {
		if tc.present {
			t.Run(tc.name, func(t *testing.T) { checkRoundTrip(t, []byte(tc.body)) })
		}
	}
}

func checkRoundTrip(t *testing.T, body []byte) {
	t.Helper()
	u, err := DecodeUsage(body)
	if err != nil || u == nil {
		return
	}
	b, err := json.Marshal(struct {
		Usage *Usage `json:"usage"`
	}{u})
	if err != nil {
		t.Fatalf("marshaling %+v: %v", u, err)
	}
	again, err := DecodeUsage(b)
	if err != nil || again == nil {
		t.Fatalf("decoding %s: %+v, %v", b, again, err)
	}
	p1, c1, ok1 := u.CachedPrompt()
	p2, c2, ok2 := again.CachedPrompt()
	if p1 != p2 || c1 != c2 || ok1 != ok2 || u.Prompt() != again.Prompt() {
		t.Fatalf("round trip changed %s to %s", body, b)
	}
	if !HasUsage(b) {
		t.Fatalf("HasUsage misses %s", b)
	}
}
