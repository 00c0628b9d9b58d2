//go:build unix

package scorer

import (
	"context"
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

// BenchmarkLongWord routes a completion whose prompt is one long word:
// "tokenize" is the unbounded encode every such request paid before the
// per-request bound, "pick" the whole decision now (pool without
// maxModelLen, so the default bound applies). cpu-ms/op is measured
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
	}{{"64KB", 64 << 10}, {"1MB", 1 << 20}, {"3MB", 3 << 20}} {
		req := &Request{Kind: KindCompletion, Model: "m", Prompts: []string{longWord(size.n)}}
		b.Run("tokenize/"+size.name, func(b *testing.B) {
			benchCPU(b, func() {
				if _, err := local.Tokens(context.Background(), req, nil); err != nil {
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
