package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/warmroute/warmroute/tokenizer"
	"github.com/warmroute/warmroute/tokenizer/tokenizertest"
)

type tokenizeOut struct {
	Count       int   `json:"count"`
	MaxModelLen int   `json:"max_model_len"`
	Tokens      []int `json:"tokens"`
}

func postTokenize(t *testing.T, url, body string) (int, tokenizeOut) {
	t.Helper()
	resp := post(t, url, "/tokenize", body, nil)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out tokenizeOut
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("decoding %s: %v", b, err)
		}
	}
	return resp.StatusCode, out
}

var tokenizeCases = []struct {
	name, body string
	want       int // status
}{
	{"prompt", `{"prompt":"Hello world"}`, 200},
	{"prompt with model", `{"model":"sim-model","prompt":"Hello world","add_special_tokens":false}`, 200},
	{"chat", `{"messages":[{"role":"user","content":"Hi"}],"add_generation_prompt":true}`, 200},
	{"unknown model", `{"model":"nope","prompt":"x"}`, 404},
	{"neither", `{"model":"sim-model"}`, 400},
	{"both", `{"prompt":"x","messages":[{"role":"user","content":"Hi"}]}`, 400},
	{"malformed", `{"prompt":`, 400},
	{"bad messages", `{"messages":[{"content":"no role"}]}`, 400},
}

func TestTokenize(t *testing.T) {
	s, ts := startServer(t, Options{MaxModelLen: 999})
	for _, tt := range tokenizeCases {
		t.Run(tt.name, func(t *testing.T) {
			status, out := postTokenize(t, ts.URL, tt.body)
			if status != tt.want {
				t.Fatalf("status %d, want %d", status, tt.want)
			}
			if status == 200 && (out.Count != len(out.Tokens) || out.Count == 0 || out.MaxModelLen != 999) {
				t.Fatalf("response %+v", out)
			}
		})
	}
	t.Run("same ids as generation", func(t *testing.T) {
		_, out := postTokenize(t, ts.URL, `{"prompt":"Hello world again"}`)
		ids, err := s.Engine().Tokenize(Request{Prompt: "Hello world again"}, true)
		if err != nil || !slices.Equal(ids, out.Tokens) {
			t.Fatalf("tokenize %v, engine %v (%v)", out.Tokens, ids, err)
		}
	})
}

func FuzzDecodeTokenize(f *testing.F) {
	for _, tt := range tokenizeCases {
		f.Add([]byte(tt.body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, _, err := decodeTokenize(body)
		if err != nil && !errors.Is(err, ErrInvalidRequest) {
			t.Fatalf("error %v does not wrap ErrInvalidRequest", err)
		}
		if err == nil && req.Chat != nil && (req.Prompt != "" || len(req.Chat.Messages) == 0) {
			t.Fatalf("chat request %+v also has a prompt or lacks messages", req)
		}
		if err == nil && req.Chat == nil && json.Valid(body) && !strings.Contains(string(body), "prompt") {
			t.Fatalf("prompt request from %q without a prompt", body)
		}
	})
}

// TestRealTokenizerMatchesRouter checks the simulator computes exactly the
// ids the router's tokenizer computes, for completions and chat, and that
// its cache hits are counted on those ids.
func TestRealTokenizerMatchesRouter(t *testing.T) {
	dir := tokenizertest.Dir(t, "qwen3")
	tk, err := tokenizer.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	chat, err := tk.ChatTemplate()
	if err != nil {
		t.Fatal(err)
	}
	s, ts := startServer(t, Options{TokenizerDir: dir, PromptTokensDetails: true, BlockSize: 4})
	msgs := `[{"role":"system","content":"You are terse."},{"role":"user","content":"Name three primes."}]`
	t.Run("completion", func(t *testing.T) {
		want, _ := tk.Encode("The quick brown fox jumps over the lazy dog", true)
		_, out := postTokenize(t, ts.URL, `{"prompt":"The quick brown fox jumps over the lazy dog"}`)
		if !slices.Equal(out.Tokens, toInts(want)) {
			t.Fatalf("sim %v, router %v", out.Tokens, want)
		}
	})
	t.Run("chat", func(t *testing.T) {
		want, err := tk.EncodeChat(chat, tokenizer.ChatRequest{Messages: json.RawMessage(msgs), AddGenerationPrompt: true})
		if err != nil {
			t.Fatal(err)
		}
		_, out := postTokenize(t, ts.URL, `{"messages":`+msgs+`}`)
		if !slices.Equal(out.Tokens, toInts(want)) {
			t.Fatalf("sim %v, router %v", out.Tokens, want)
		}
		body := fmt.Sprintf(`{"model":%q,"messages":%s,"max_tokens":1}`, DefaultModel, msgs)
		post(t, ts.URL, "/v1/chat/completions", body, nil).Body.Close()
		r := lastResponse(t, post(t, ts.URL, "/v1/chat/completions", body, nil), false)
		if r.Usage.PromptTokens != len(want) || cachedTokens(t, r) != (len(want)-1)/4*4 {
			t.Fatalf("usage %+v for %d prompt tokens", r.Usage, len(want))
		}
		if blk := s.Engine().CacheState().Blocks[0]; !slices.Equal(blk.TokenIDs, toInts(want[:4])) {
			t.Fatalf("first cached block %v, router ids %v", blk.TokenIDs, want[:4])
		}
	})
}

func toInts(ids []uint32) []int {
	out := make([]int, len(ids))
	for i, v := range ids {
		out[i] = int(v)
	}
	return out
}
