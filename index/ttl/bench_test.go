package ttl

import (
	"fmt"
	"testing"
	"time"

	"github.com/warmroute/warmroute/index"
)

// benchSizes are how many (endpoint, model) pairs the controller tracks.
var benchSizes = []int{1, 64, 1024}

func benchHarness(b *testing.B, pairs int, mode Mode, guarded bool) (*harness, []string) {
	src := &freshness{}
	h := newHarness(b, Config{Mode: mode}, func(o *Options) {
		o.Limits.MaxSeries = 2 * pairs
		if guarded {
			o.Freshness = src
		}
	})
	eps := make([]string, pairs)
	for i := range eps {
		eps[i] = fmt.Sprintf("10.0.%d.%d:8000", i/256, i%256)
		src.set(eps[i], Freshness{SilenceLimit: testSilenceLimit, LastEvent: t0, Connected: true})
		h.TTL(eps[i], "m")
	}
	return h, eps
}

func BenchmarkTTL(b *testing.B) {
	for _, mode := range []Mode{ModeStatic, ModeAdaptive} {
		for _, guarded := range []bool{false, true} {
			for _, n := range benchSizes {
				b.Run(fmt.Sprintf("%s/guard=%v/pairs=%d", mode, guarded, n), func(b *testing.B) {
					h, eps := benchHarness(b, n, mode, guarded)
					b.ReportAllocs()
					i := 0
					for b.Loop() {
						h.TTL(eps[i%n], "m")
						i++
					}
				})
			}
		}
	}
}

func BenchmarkTrust(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("pairs=%d", n), func(b *testing.B) {
			h, eps := benchHarness(b, n, ModeStatic, true)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				h.Trust(eps[i%n], "m")
				i++
			}
		})
	}
}

// BenchmarkBeginObserve is one decision's life: Begin, then the Observe that
// confirms it. In steady state the table holds about rate x lifetime
// decisions; here it never grows beyond what the loop leaves behind.
func BenchmarkBeginObserve(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("pairs=%d", n), func(b *testing.B) {
			h, eps := benchHarness(b, n, ModeStatic, false)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				ep, id := eps[i%n], index.DecisionID(i)
				h.Begin(id, Route{Endpoint: ep, Model: "m", PromptTokens: 2000, NewSpeculative: 4, BlockSize: 16, At: t0})
				h.Observe(index.Outcome{Kind: index.Confirmed, Endpoint: ep, Decision: id, Blocks: 4, Latency: 300 * time.Millisecond})
				i++
			}
		})
	}
}

// BenchmarkObserveUnattributed is the cost of another replica's outcome.
func BenchmarkObserveUnattributed(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("pairs=%d", n), func(b *testing.B) {
			h, eps := benchHarness(b, n, ModeStatic, false)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				h.Observe(index.Outcome{Kind: index.StaleExpiry, Endpoint: eps[i%n], Decision: index.DecisionID(i), Blocks: 1})
				i++
			}
		})
	}
}

// BenchmarkStep is one Run round over every pair, each with a full window.
func BenchmarkStep(b *testing.B) {
	for _, n := range []int{1, 64} {
		b.Run(fmt.Sprintf("pairs=%d", n), func(b *testing.B) {
			h, eps := benchHarness(b, n, ModeAdaptive, false)
			for i := range DefaultWindowSamples {
				for j, ep := range eps {
					h.confirm(index.DecisionID(i*n+j), ep, "m", time.Duration(i)*time.Millisecond, index.Confirmed)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				h.step(h.clk.Now())
			}
		})
	}
}
