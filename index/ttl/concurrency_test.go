package ttl

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/warmroute/warmroute/index"
)

// TestConcurrentUse runs every entry point at once; run it with -race. The
// totals must add up whatever the interleaving.
func TestConcurrentUse(t *testing.T) {
	src := &freshness{}
	h := newHarness(t, Config{Mode: ModeAdaptive, MinSamples: 10}, func(o *Options) { o.Freshness = src })
	for i := range 4 {
		src.set(fmt.Sprint("e", i), Freshness{SilenceLimit: testSilenceLimit, LastEvent: t0, Connected: true})
	}
	const workers, per = 4, 500
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			ep := fmt.Sprint("e", w)
			for i := range per {
				id := index.DecisionID(w*per + i)
				h.TTL(ep, "m")
				h.Trust(ep, "m")
				h.Begin(id, Route{Endpoint: ep, Model: "m", MatchedSpeculative: 1, NewSpeculative: 2, BlockSize: 16, At: t0})
				h.Observe(index.Outcome{Kind: index.Confirmed, Endpoint: ep, Decision: id, Blocks: 2, Latency: time.Duration(i) * time.Millisecond})
				h.Usage(id, 100, 16, true)
			}
		})
	}
	wg.Go(func() {
		for range 50 {
			h.step(h.clk.Now())
			_ = h.Report()
		}
	})
	wg.Wait()
	rep := h.Report()
	if rep.Overall.Endings.Confirmed != 2*workers*per || rep.Overall.Advice.Samples != workers*per || rep.Decisions != 0 {
		t.Fatalf("overall %+v, decisions %d", rep.Overall, rep.Decisions)
	}
}
