//go:build unix

package scorer

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/tokenizer"
	"github.com/warmroute/warmroute/tokenizer/tokenizertest"
)

// longWord is n random lowercase letters: one pre-tokenizer "word", the
// most expensive text per byte for a BPE merge.
func longWord(n int) string {
	r := rand.New(rand.NewPCG(1, 2))
	var sb strings.Builder
	sb.Grow(n)
	for range n {
		sb.WriteByte(byte('a' + r.IntN(26)))
	}
	return sb.String()
}

// cpuTime is the process's user plus system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// longWords is n bytes of random lowercase words of size letters each,
// separated by spaces: the most expensive text per byte that stays under a
// per-word bound.
func longWords(n, size int) string {
	w := longWord(n)
	var sb strings.Builder
	for i := 0; sb.Len()+size+1 <= n; i += size {
		sb.WriteString(w[i : i+size])
		sb.WriteByte(' ')
	}
	return sb.String()
}

// BenchmarkLongWord routes a completion whose prompt is one long word, or
// many random words: "tokenize" is the encode alone (bounded by the
// tokenizer's long-word budget, tokenizer.MaxLongWordBytes), "pick" the
// whole decision (pool without maxModelLen, so the default byte bound
// applies too). cpu-ms/op is measured
// beside wall time because the machine is shared.
func BenchmarkLongWord(b *testing.B) {
	tk, err := tokenizer.LoadDir(tokenizertest.Dir(b, "llama3"))
	if err != nil {
		b.Fatal(err)
	}
	local := NewLocalTokens(tk)
	ix, _ := index.New(index.Options{BlockSize: 16})
	pools := []PoolConfig{{Name: "m", Endpoints: []string{"10.0.0.1:8000"}}}
	s := New(NewPools(pools, ""), &Load{}, Options{Index: ix, Tokens: map[string]Tokens{"m": local}})
	for _, size := range []struct {
		name string
		n    int
		text string
	}{{"64KB", 64 << 10, ""}, {"1MB", 1 << 20, ""}, {"3MB", 3 << 20, ""},
		{"1MB_of_4KB_words", 1 << 20, longWords(1<<20, 4<<10)}, {"1MB_of_255B_words", 1 << 20, longWords(1<<20, 255)},
		{"1MB_of_63B_words", 1 << 20, longWords(1<<20, 63)}} {
		if size.text == "" {
			size.text = longWord(size.n)
		}
		req := &Request{Kind: KindCompletion, Model: "m", Prompts: []string{size.text}}
		b.Run("tokenize/"+size.name, func(b *testing.B) {
			benchCPU(b, func() {
				// The long-words bound refuses the larger ones, as pick does.
				if _, err := local.tk.Encode(req.Prompts[0], false); err != nil && !errors.Is(err, tokenizer.ErrLongWords) {
					b.Fatal(err)
				}
			})
		})
		b.Run("pick/"+size.name, func(b *testing.B) {
			benchCPU(b, func() {
				d, err := s.Pick(context.Background(), req)
				if err != nil {
					b.Fatal(err)
				}
				d.Release()
			})
		})
	}
}

func benchCPU(b *testing.B, op func()) {
	b.ReportAllocs()
	start := cpuTime(b)
	for b.Loop() {
		op()
	}
	b.ReportMetric(float64(cpuTime(b)-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// TestLongWordsRouteOnLoad: text the tokenizer refuses for its long words
// is too long for the router (routed on load, counted too_long), not an
// encode failure.
func TestLongWordsRouteOnLoad(t *testing.T) {
	tk, err := tokenizer.LoadDir(tokenizertest.Dir(t, "llama3"))
	if err != nil {
		t.Fatal(err)
	}
	local := NewLocalTokens(tk)
	tests := []struct {
		name    string
		req     *Request
		tooLong bool
	}{
		{"completion of one long word", &Request{Kind: KindCompletion, Model: "m", Prompts: []string{longWord(tokenizer.MaxLongWordBytes + 1)}}, true},
		{"chat of one long word", chatOf(longWord(tokenizer.MaxLongWordBytes+1), "hi"), true},
		{"completion of prose", &Request{Kind: KindCompletion, Model: "m", Prompts: []string{strings.Repeat("the cat sat. ", 30_000)}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := local.Tokens(context.Background(), tt.req, nil)
			if got := errors.Is(err, ErrPromptTooLong); got != tt.tooLong {
				t.Fatalf("Tokens error = %v, want too long %v", err, tt.tooLong)
			}
			if tt.tooLong && tokenizeReason(err) != "too_long" {
				t.Errorf("reason = %q, want too_long", tokenizeReason(err))
			}
		})
	}
}
