package tokenizer

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// conversation renders turn n (1-based) of a synthetic chat: n user
// messages and n-1 assistant replies, with the generation prompt.
func conversation(t testing.TB, ct *ChatTemplate, n int) string {
	t.Helper()
	var msgs []map[string]string
	msgs = append(msgs, map[string]string{"role": "system", "content": "You are a concise assistant."})
	for i := 1; i <= n; i++ {
		msgs = append(msgs, map[string]string{"role": "user", "content": fmt.Sprintf("Question %d: %s", i, prose(i, 120))})
		if i < n {
			msgs = append(msgs, map[string]string{"role": "assistant", "content": fmt.Sprintf("Answer %d: %s", i, prose(i+100, 200))})
		}
	}
	raw, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	text, err := ct.Render(ChatRequest{Messages: raw, AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// prose is deterministic filler text with punctuation and newlines.
func prose(seed, words int) string {
	r := rand.New(rand.NewPCG(uint64(seed), 7))
	vocab := strings.Fields("the cache router prefix token block model engine request reply fast slow , . ! ? \n 42 2025 naïve café 東京")
	out := make([]string, words)
	for i := range out {
		out[i] = vocab[r.IntN(len(vocab))]
	}
	return strings.Join(out, " ")
}

func TestPrefixCacheMatchesEncode(t *testing.T) {
	for _, fam := range []string{"llama3", "qwen3", "gemma3", "deepseek_v3"} {
		t.Run(fam, func(t *testing.T) {
			tk := loadFamily(t, fam)
			ct, err := tk.ChatTemplate()
			if err != nil {
				t.Fatal(err)
			}
			pc := NewPrefixCache(tk, 8<<20)
			for turn := 1; turn <= 6; turn++ {
				text := conversation(t, ct, turn)
				for _, special := range []bool{false, true} {
					want, _ := tk.Encode(text, special)
					got, err := pc.Encode(text, special)
					if err != nil || !slices.Equal(got, want) {
						t.Fatalf("turn %d special=%v: cache differs from Encode (err %v)", turn, special, err)
					}
				}
			}
			if hits, _ := pc.Stats(); hits == 0 {
				t.Fatalf("no prefix re-used over 6 turns")
			}
		})
	}
}

func TestPrefixCacheRandomSplits(t *testing.T) {
	g := loadGolden(t)
	for _, fam := range families {
		t.Run(fam, func(t *testing.T) {
			tk := loadFamily(t, fam)
			pc := NewPrefixCache(tk, 1<<20)
			r := rand.New(rand.NewPCG(1, 2))
			for i := 0; i < 300; i++ {
				a, b := g.Texts[r.IntN(len(g.Texts))], g.Texts[r.IntN(len(g.Texts))]
				for _, text := range []string{a, a + b, a + b + a} {
					want, _ := tk.Encode(text, false)
					got, err := pc.Encode(text, false)
					if err != nil || !slices.Equal(got, want) {
						t.Fatalf("Encode(%q) via cache differs", text)
					}
				}
			}
		})
	}
}

func TestPrefixCacheBounded(t *testing.T) {
	tk := loadFamily(t, "qwen3")
	pc := NewPrefixCache(tk, 4096)
	for i := 0; i < 200; i++ {
		if _, err := pc.Encode(fmt.Sprintf("<|im_start|>user\n%d %s<|im_end|>\nmore", i, prose(i, 50)), false); err != nil {
			t.Fatal(err)
		}
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.bytes > 4096 || pc.lru.Len() == 0 {
		t.Fatalf("cache holds %d bytes in %d entries, budget 4096", pc.bytes, pc.lru.Len())
	}
}

// BenchmarkMultiTurn measures encoding turn N of a growing conversation with
// and without the prefix cache (the cache having seen turns 1..N-1).
func BenchmarkMultiTurn(b *testing.B) {
	tk := loadFamily(b, "qwen3")
	ct, err := tk.ChatTemplate()
	if err != nil {
		b.Fatal(err)
	}
	for _, turn := range []int{2, 5, 10, 20} {
		text := conversation(b, ct, turn)
		prev := conversation(b, ct, turn-1)
		b.Run(fmt.Sprintf("turn%d/nocache", turn), func(b *testing.B) {
			benchEncode(b, tk, text)
		})
		b.Run(fmt.Sprintf("turn%d/cache", turn), func(b *testing.B) {
			pc := NewPrefixCache(tk, 64<<20)
			b.ReportAllocs()
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				b.StopTimer()
				pc = NewPrefixCache(tk, 64<<20)
				if _, err := pc.Encode(prev, false); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := pc.Encode(text, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
