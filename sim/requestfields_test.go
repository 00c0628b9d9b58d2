package sim

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/warmroute/warmroute/extproc"
	"github.com/warmroute/warmroute/scorer"
	"github.com/warmroute/warmroute/tokenizer"
	"github.com/warmroute/warmroute/tokenizer/tokenizertest"
)

// TestRequestFieldsMatchRouter: with a real tokenizer the simulator renders
// and encodes each request with every field the router honours
// (add_special_tokens, add_generation_prompt, continue_final_message,
// chat_template_kwargs, documents, reasoning_effort, tools), so the prompt
// tokens it counts and caches are the router's prediction, and each field
// changes what it counts.
func TestRequestFieldsMatchRouter(t *testing.T) {
	const msgs = `"messages":[{"role":"user","content":"Write a haiku."},{"role":"assistant","content":"Autumn moon rises"}]`
	const user = `"messages":[{"role":"user","content":"Quick answer please"}]`
	tools := `"tools":[{"type":"function","function":{"name":"now","description":"Time."}}]`
	tests := []struct {
		family, path, body, without string
	}{
		{"gemma3", "/v1/completions", `"prompt":"The quick brown fox","add_special_tokens":false`, `"prompt":"The quick brown fox"`},
		{"gemma3", "/v1/chat/completions", user + `,"add_special_tokens":true`, user},
		{"qwen3", "/v1/chat/completions", msgs + `,"add_generation_prompt":false,"continue_final_message":true`, msgs + `,"add_generation_prompt":false`},
		{"qwen3", "/v1/chat/completions", msgs + `,"add_generation_prompt":false`, msgs},
		{"qwen3", "/v1/chat/completions", user + `,"chat_template_kwargs":{"enable_thinking":false}`, user},
		{"qwen3", "/v1/chat/completions", user + `,"reasoning_effort":"none"`, user},
		{"qwen3", "/v1/chat/completions", user + `,` + tools, user},
		{"gemma3", "/v1/chat/completions", user + `,"documents":[{"title":"A","text":"Alpha."}],"chat_template":"{{ documents[0].text }}{{ messages[0].content }}"`,
			user + `,"chat_template":"{{ documents[0].text }}{{ messages[0].content }}","documents":[{"title":"A","text":"Longer alpha text."}]`},
	}
	servers := map[string]string{}
	locals := map[string]*scorer.LocalTokens{}
	for _, fam := range []string{"gemma3", "qwen3"} {
		dir := tokenizertest.Dir(t, fam)
		_, ts := startServer(t, Options{TokenizerDir: dir, PromptTokensDetails: true, BlockSize: 4})
		tk, err := tokenizer.LoadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		servers[fam], locals[fam] = ts.URL, scorer.NewLocalTokens(tk)
	}
	for _, tt := range tests {
		t.Run(tt.family+"/"+tt.body, func(t *testing.T) {
			want := routerIDs(t, locals[tt.family], tt.path, tt.body)
			without := routerIDs(t, locals[tt.family], tt.path, tt.without)
			if slices.Equal(want, without) {
				t.Fatalf("the field changes nothing the router predicts: %v", want)
			}
			for _, c := range []struct {
				body string
				ids  []uint32
			}{{tt.body, want}, {tt.without, without}} {
				body := fmt.Sprintf(`{"model":%q,"max_tokens":1,%s}`, DefaultModel, c.body)
				r := lastResponse(t, post(t, servers[tt.family], tt.path, body, nil), false)
				if r.Usage.PromptTokens != len(c.ids) {
					t.Fatalf("%s: sim counted %d prompt tokens, router predicts %d", c.body, r.Usage.PromptTokens, len(c.ids))
				}
			}
		})
	}
}

// TestTokenizeContinueFinalMessage: /tokenize reads continue_final_message
// and chat_template, as vLLM's does and as the router's remote mode sends
// them.
func TestTokenizeContinueFinalMessage(t *testing.T) {
	dir := tokenizertest.Dir(t, "qwen3")
	_, ts := startServer(t, Options{TokenizerDir: dir})
	tk, err := tokenizer.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fields := `"messages":[{"role":"user","content":"Count."},{"role":"assistant","content":"One, two"}],"add_generation_prompt":false`
	for _, f := range []string{fields, fields + `,"continue_final_message":true`, fields + `,"chat_template":"{{ messages[1].content }}"`} {
		want := routerIDs(t, scorer.NewLocalTokens(tk), "/v1/chat/completions", f)
		if _, out := postTokenize(t, ts.URL, "{"+f+"}"); !slices.Equal(out.Tokens, toInts(want)) {
			t.Fatalf("%s: sim %v, router %v", f, out.Tokens, want)
		}
	}
}

func routerIDs(t *testing.T, local *scorer.LocalTokens, path, fields string) []uint32 {
	t.Helper()
	req, err := extproc.ParseRequest(path, []byte(`{"model":"m",`+fields+`}`))
	if err != nil {
		t.Fatal(err)
	}
	ids, err := local.Tokens(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}
