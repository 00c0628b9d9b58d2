package scorer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/warmroute/warmroute/tokenizer"
	"github.com/warmroute/warmroute/tokenizer/tokenizertest"
)

// TestLoadTokensEngine: a pool's engine setting picks whose preprocessing
// its prompts get. The same requests tokenize differently for vLLM and
// SGLang pools where the engines differ (SGLang reads no
// add_special_tokens or add_generation_prompt, turns a trailing assistant
// message into a user one), and the same where they agree.
func TestLoadTokensEngine(t *testing.T) {
	llama, gemma := tokenizertest.Dir(t, "llama3"), tokenizertest.Dir(t, "gemma3") // Gemma's post-processor adds BOS
	toks, err := LoadTokens([]PoolConfig{
		{Name: "llama3/v", Tokenizer: TokenizerConfig{Dir: llama}},
		{Name: "llama3/s", Engine: "sglang", Tokenizer: TokenizerConfig{Dir: llama}},
		{Name: "gemma3/v", Tokenizer: TokenizerConfig{Dir: gemma}},
		{Name: "gemma3/s", Engine: "sglang", Tokenizer: TokenizerConfig{Dir: gemma}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	trailing := chatTurns(t, "Be brief.", "Hi", "Hello.")
	trailing.NoGenerationPrompt = true
	noBOS := &Request{Kind: KindCompletion, Prompts: []string{"The quick brown fox"}, SpecialTokens: SpecialTokensOff}
	tests := []struct {
		name, family string
		req          *Request
		same         bool
	}{
		{"plain chat", "llama3", chatTurns(t, "Be brief.", "Hi"), true},
		{"trailing assistant without generation prompt", "llama3", trailing, false},
		{"completion without special tokens", "gemma3", noBOS, false},
		{"completion", "gemma3", &Request{Kind: KindCompletion, Prompts: []string{"The quick brown fox"}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := toks[tt.family+"/v"].Tokens(context.Background(), tt.req, nil)
			if err != nil {
				t.Fatal(err)
			}
			s, err := toks[tt.family+"/s"].Tokens(context.Background(), tt.req, nil)
			if err != nil {
				t.Fatal(err)
			}
			if slices.Equal(v, s) != tt.same {
				t.Fatalf("vLLM %v\nSGLang %v\nwant equal: %v", v, s, tt.same)
			}
		})
	}
}

func TestLoadTokensBadEngine(t *testing.T) {
	_, err := LoadTokens([]PoolConfig{{Name: "x", Engine: "tgi", Tokenizer: TokenizerConfig{Dir: t.TempDir()}}}, nil)
	if !errors.Is(err, ErrTokenizerConfig) {
		t.Fatalf("err = %v, want ErrTokenizerConfig", err)
	}
}

// TestSGLangRefusesRebuiltTokenizer: a Llama-class SentencePiece tokenizer
// (Mistral-7B v0.1) is refused for SGLang pools, whose transformers rebuilds
// it, and encoded for vLLM pools.
func TestSGLangRefusesRebuiltTokenizer(t *testing.T) {
	dir := tokenizertest.Dir(t, "llama2")
	if _, err := os.Stat(filepath.Join(dir, "tokenizer_config.json")); err != nil {
		t.Fatal(err)
	}
	tk, err := tokenizer.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	req := &Request{Kind: KindCompletion, Prompts: []string{"hi"}}
	if _, err := NewLocalTokens(tk, WithEngine(tokenizer.EngineSGLang)).Tokens(context.Background(), req, nil); !errors.Is(err, tokenizer.ErrUnsupported) {
		t.Fatalf("SGLang pool: err = %v, want ErrUnsupported", err)
	}
	if _, err := NewLocalTokens(tk).Tokens(context.Background(), req, nil); err != nil {
		t.Fatalf("vLLM pool: %v", err)
	}
}
