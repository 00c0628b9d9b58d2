package tokenizer

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/warmroute/warmroute/internal/benchcpu"
)

// benchSizes are the input sizes for throughput benchmarks; the reference
// run (testdata/bench_ref.py) uses the same texts.
var benchSizes = []struct {
	name string
	n    int
}{{"1KB", 1 << 10}, {"10KB", 10 << 10}, {"100KB", 100 << 10}, {"1MB", 1 << 20}}

// benchText builds the benchmark input from the golden corpus: "prose" is
// the English prose documents, "mixed" everything (code, many scripts,
// emoji, whitespace runs). It must stay in step with bench_ref.py.
func benchText(t testing.TB, kind string, n int) string {
	g := loadGolden(t)
	var parts []string
	for _, s := range g.Texts {
		if kind == "mixed" || len(s) > 2000 {
			parts = append(parts, s)
		}
	}
	all := strings.Join(parts, "\n")
	for len(all) < n {
		all += "\n" + all
	}
	cut := all[:n]
	for !utf8.ValidString(cut) {
		cut = cut[:len(cut)-1]
	}
	return cut
}

func BenchmarkEncode(b *testing.B) {
	for _, fam := range families {
		tk := loadFamily(b, fam)
		for _, kind := range []string{"prose", "mixed"} {
			for _, sz := range benchSizes {
				text := benchText(b, kind, sz.n)
				b.Run(fam+"/"+kind+"/"+sz.name, func(b *testing.B) {
					benchEncode(b, tk, text)
				})
			}
		}
	}
}

func benchEncode(b *testing.B, tk *Tokenizer, text string) {
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	var ids []uint32
	var err error
	cpu := benchcpu.Start()
	for b.Loop() {
		if ids, err = tk.AppendEncode(ids[:0], text, false); err != nil {
			b.Fatal(err)
		}
	}
	cpu.Report(b)
	b.ReportMetric(float64(len(ids))*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkEncodeCold is BenchmarkEncode with the word cache emptied before
// every op (inside the timer), as for a prompt none of whose words were
// seen: the reference run clears its cache the same way
// (testdata/bench_vs_ref.py --cold).
func BenchmarkEncodeCold(b *testing.B) {
	for _, fam := range families {
		tk := loadFamily(b, fam)
		for _, sz := range benchSizes[2:] {
			text := benchText(b, "prose", sz.n)
			b.Run(fam+"/prose/"+sz.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(text)))
				var ids []uint32
				var err error
				cpu := benchcpu.Start()
				for b.Loop() {
					tk.model.cache.clear()
					if ids, err = tk.AppendEncode(ids[:0], text, false); err != nil {
						b.Fatal(err)
					}
				}
				cpu.Report(b)
			})
		}
	}
}

// clear empties the cache; benchmarks only, never while encoding.
func (c *wordCache) clear() {
	for i := range c.slots {
		c.slots[i].Store(nil)
	}
}
