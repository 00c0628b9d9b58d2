package scorer

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/warmroute/warmroute/internal/benchcpu"
	"github.com/warmroute/warmroute/tokenizer"
	"github.com/warmroute/warmroute/tokenizer/tokenizertest"
)

// longProse returns about n bytes of English prose from the tokenizer's
// golden corpus (its documents over 2,000 bytes, repeated).
func longProse(b *testing.B, n int) string {
	g := tokenizertest.LoadGolden(b)
	var sb strings.Builder
	for sb.Len() < n {
		for _, s := range g.Texts {
			if len(s) > 2000 {
				sb.WriteString(s)
				sb.WriteString("\n\n")
			}
		}
	}
	return sb.String()
}

// BenchmarkLongPrompt is the long-prompt path of one completions request
// without the ext_proc exchange: Qwen 3 tokenization of a ~100k-token
// prompt, keying, lookup over 8 endpoints holding 1M blocks, scoring,
// commit and release. Each prompt starts with its own line, so neither the
// prefix cache nor the index has seen it; the tokenizer's word cache is
// warm, as in a running router. `make profile` records its CPU profile.
func BenchmarkLongPrompt(b *testing.B) {
	tk, err := tokenizer.LoadDir(tokenizertest.Dir(b, "qwen3"))
	if err != nil {
		b.Fatal(err)
	}
	eps := benchEndpoints(8)
	s := New(NewPools([]PoolConfig{{Name: "m", Endpoints: eps}}, ""), &Load{}, Options{
		Index: benchIndex(b, eps, 1_000_000), Tokens: map[string]Tokens{"m": NewLocalTokens(tk)}, Fallbacks: 2,
	})
	body := longProse(b, 400<<10)
	ctx := context.Background()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	tokens := 0
	cpu := benchcpu.Start()
	for i := 0; b.Loop(); i++ {
		prompt := "Request " + strconv.Itoa(i) + ".\n" + body
		d, err := s.Pick(ctx, &Request{Kind: KindCompletion, Model: "m", Prompts: []string{prompt}})
		if err != nil {
			b.Fatal(err)
		}
		d.Commit()
		d.Release()
		tokens = d.promptTokens
	}
	cpu.Report(b)
	b.ReportMetric(float64(tokens), "tokens")
}
