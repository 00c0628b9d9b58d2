package scorer

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/warmroute/warmroute/tokenizer"
	"github.com/warmroute/warmroute/tokenizer/tokenizertest"
)

// add_special_tokens decides whether the engine prepends BOS, as vLLM does:
// on by default for completions, off by default for chat (the template
// writes BOS, so turning it on gives two). Gemma 3 and Mistral (llama2) are
// the families whose tokenizer.json adds a BOS; Mistral has no chat template.
func TestLocalTokensSpecialTokens(t *testing.T) {
	chat := func(st SpecialTokens) *Request {
		return &Request{Kind: KindChat, SpecialTokens: st, Messages: []Message{
			{Role: "user", Content: "hi", Raw: []byte(`{"role":"user","content":"hi"}`)}}}
	}
	completion := func(st SpecialTokens) *Request {
		return &Request{Kind: KindCompletion, Prompts: []string{"hi"}, SpecialTokens: st}
	}
	tests := []struct {
		family   string
		bos      uint32
		name     string
		req      *Request
		wantBOS  int  // leading BOS ids
		wantBody bool // the ids after BOS are exactly those of "hi"
	}{
		{"gemma3", 2, "completion default", completion(SpecialTokensDefault), 1, true},
		{"gemma3", 2, "completion on", completion(SpecialTokensOn), 1, true},
		{"gemma3", 2, "completion off", completion(SpecialTokensOff), 0, true},
		{"gemma3", 2, "chat default", chat(SpecialTokensDefault), 1, false},
		{"gemma3", 2, "chat off", chat(SpecialTokensOff), 1, false},
		{"gemma3", 2, "chat on", chat(SpecialTokensOn), 2, false},
		{"llama2", 1, "completion default", completion(SpecialTokensDefault), 1, true},
		{"llama2", 1, "completion off", completion(SpecialTokensOff), 0, true},
	}
	loaded := map[string]*tokenizer.Tokenizer{}
	for _, tt := range tests {
		t.Run(tt.family+"/"+tt.name, func(t *testing.T) {
			tk := loaded[tt.family]
			if tk == nil {
				var err error
				if tk, err = tokenizer.LoadDir(tokenizertest.Dir(t, tt.family)); err != nil {
					t.Fatal(err)
				}
				loaded[tt.family] = tk
			}
			plain, err := tk.Encode("hi", false)
			if err != nil {
				t.Fatal(err)
			}
			ids, err := NewLocalTokens(tk).Tokens(context.Background(), tt.req, nil)
			if err != nil {
				t.Fatal(err)
			}
			bos := 0
			for bos < len(ids) && ids[bos] == tt.bos {
				bos++
			}
			if bos != tt.wantBOS {
				t.Fatalf("%d leading BOS in %v, want %d", bos, ids, tt.wantBOS)
			}
			if tt.wantBody && !slices.Equal(ids[bos:], plain) {
				t.Fatalf("ids after BOS = %v, want %v", ids[bos:], plain)
			}
		})
	}
}

// The engine's /tokenize gets the request's add_special_tokens, defaulted
// per kind as vLLM's request models do.
func TestRemoteTokensSpecialTokens(t *testing.T) {
	ep, bodies := fakeEngine(t, []uint32{1})
	rt := NewRemoteTokens(nil, time.Second)
	msgs := []Message{{Role: "user", Raw: []byte(`{"role":"user","content":"hi"}`)}}
	tests := []struct {
		name string
		req  *Request
		want bool
	}{
		{"completion default", &Request{Kind: KindCompletion, Prompts: []string{"hi"}}, true},
		{"completion off", &Request{Kind: KindCompletion, Prompts: []string{"hi"}, SpecialTokens: SpecialTokensOff}, false},
		{"chat default", &Request{Kind: KindChat, Messages: msgs}, false},
		{"chat on", &Request{Kind: KindChat, Messages: msgs, SpecialTokens: SpecialTokensOn}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := rt.Tokens(context.Background(), tt.req, []string{ep}); err != nil {
				t.Fatal(err)
			}
			if got := (<-bodies)["add_special_tokens"]; got != tt.want {
				t.Fatalf("add_special_tokens = %v, want %v", got, tt.want)
			}
		})
	}
}

// A chat request's reasoning_effort reaches the template; /tokenize has no
// such field, so the engine gets the kwargs it becomes.
func TestRemoteTokensReasoningEffort(t *testing.T) {
	ep, bodies := fakeEngine(t, []uint32{1})
	req := &Request{Kind: KindChat, ReasoningEffort: "none",
		Messages: []Message{{Role: "user", Raw: []byte(`{"role":"user","content":"hi"}`)}}}
	if _, err := NewRemoteTokens(nil, time.Second).Tokens(context.Background(), req, []string{ep}); err != nil {
		t.Fatal(err)
	}
	kw, _ := (<-bodies)["chat_template_kwargs"].(map[string]any)
	if kw["enable_thinking"] != false || kw["reasoning_effort"] != "none" {
		t.Fatalf("chat_template_kwargs = %v, want enable_thinking false and reasoning_effort none", kw)
	}
}
