package tokenizer

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// conversation renders turn n (1-based) of a synthetic chat.
func conversation(t testing.TB, ct *ChatTemplate, n int) string {
	t.Helper()
	text, err := ct.Render(conversationRequest(t, n))
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// conversationRequest is turn n of a synthetic chat: n user messages and
// n-1 assistant replies, with the generation prompt.
func conversationRequest(t testing.TB, n int) ChatRequest {
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
	return ChatRequest{Messages: raw, AddGenerationPrompt: true}
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

func TestPrefixCacheAppendEncode(t *testing.T) {
	tk := loadFamily(t, "llama3")
	pc := NewPrefixCache(tk, 1<<20)
	text := "<|start_header_id|>user<|end_header_id|>\n\nhi there<|eot_id|>"
	head := []uint32{7, 8, 9}
	want, _ := tk.AppendEncode(slices.Clone(head), text+" more", true)
	for round := range 3 {
		got, err := pc.AppendEncode(slices.Clone(head), text+" more", true)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("round %d: AppendEncode = %v, %v; want %v", round, got, err, want)
		}
		// The caller owns the result: scribbling on it must not reach
		// the cache.
		for i := range got {
			got[i] = 0
		}
	}
	if hits, _ := pc.Stats(); hits != 2 {
		t.Fatalf("hits = %d, want 2", hits)
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

// TestPrefixCacheEvictedParents keeps the budget at about one conversation,
// so each turn extends an entry whose older chunks were evicted from the LRU
// but are still reachable from the newer entry.
func TestPrefixCacheEvictedParents(t *testing.T) {
	tk := loadFamily(t, "qwen3")
	ct, err := tk.ChatTemplate()
	if err != nil {
		t.Fatal(err)
	}
	budget := 2 * (len(conversation(t, ct, 8)) * 2)
	pc := NewPrefixCache(tk, budget)
	for turn := 1; turn <= 8; turn++ {
		for _, fork := range []string{"", "Fork: " + prose(turn, 10)} {
			text := conversation(t, ct, turn) + fork
			want, _ := tk.Encode(text, true)
			got, err := pc.Encode(text, true)
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("turn %d fork %q: cache differs from Encode (err %v)", turn, fork, err)
			}
		}
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.bytes > budget {
		t.Fatalf("cache holds %d bytes, budget %d", pc.bytes, budget)
	}
	if pc.hits == 0 {
		t.Fatal("no prefix re-used")
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
		// Rendering the whole conversation, which EncodeChat does before
		// either path: it is not cached (see README).
		b.Run(fmt.Sprintf("turn%d/render", turn), func(b *testing.B) {
			req := conversationRequest(b, turn)
			b.ReportAllocs()
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				if _, err := ct.Render(req); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("turn%d/nocache", turn), func(b *testing.B) {
			benchEncode(b, tk, text)
		})
		b.Run(fmt.Sprintf("turn%d/cache", turn), func(b *testing.B) {
			// Like nocache, reuse the output buffer.
			var ids []uint32
			benchPrimed(b, tk, prev, text, func(pc *PrefixCache) (err error) {
				ids, err = pc.AppendEncode(ids[:0], text, false)
				return err
			})
		})
		// Encode returns a fresh slice: the copy of the cached ids then
		// includes an allocation.
		b.Run(fmt.Sprintf("turn%d/cache_alloc", turn), func(b *testing.B) {
			benchPrimed(b, tk, prev, text, func(pc *PrefixCache) error {
				_, err := pc.Encode(text, false)
				return err
			})
		})
	}
}

// benchPrimed times encode on a fresh cache that has seen prev, excluding
// the priming from the measurement.
func benchPrimed(b *testing.B, tk *Tokenizer, prev, text string, encode func(*PrefixCache) error) {
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		b.StopTimer()
		pc := NewPrefixCache(tk, 64<<20)
		if _, err := pc.Encode(prev, false); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := encode(pc); err != nil {
			b.Fatal(err)
		}
	}
}
