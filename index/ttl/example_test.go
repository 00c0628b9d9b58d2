package ttl_test

import (
	"fmt"
	"time"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/index/ttl"
)

// Example wires a Controller between a scorer and the index: the scorer asks
// TTL and Trust, calls Begin on commit, the index reports outcomes to
// Observe, and the admin report shows the advice.
func Example() {
	now := time.Unix(1_700_000_000, 0)
	c, err := ttl.New(ttl.Options{
		Config: ttl.Config{Mode: ttl.ModeAdvise, MinSamples: 3, Jitter: api.Duration(100 * time.Millisecond)},
		Now:    func() time.Time { return now },
	})
	if err != nil {
		panic(err)
	}
	ix, err := index.New(index.Options{BlockSize: 4, Observer: c, Now: func() time.Time { return now }})
	if err != nil {
		panic(err)
	}
	ep, model := "10.0.0.1:8000", "llama"
	for i, latency := range []time.Duration{200 * time.Millisecond, 300 * time.Millisecond, 900 * time.Millisecond} {
		id := index.DecisionID(i)
		tokens := []uint32{uint32(i), 2, 3, 4}
		keys, _ := index.AppendKeys(nil, index.Identity{Model: model}, 4, tokens)
		n, _ := ix.Speculate(ep, keys, id, c.TTL(ep, model))
		c.Begin(id, ttl.Route{Endpoint: ep, Model: model, PromptTokens: 4, NewSpeculative: n, BlockSize: 4, At: now})
		now = now.Add(latency) // the engine's BlockStored arrives
		ix.Store(index.Stored{Endpoint: ep, Hashes: []uint64{uint64(i + 1)}, Tokens: tokens, BlockSize: 4,
			Identity: index.Identity{Model: model}})
	}
	rep := c.Report()
	fmt.Println("ttl in force:", c.TTL(ep, model), "trust:", c.Trust(ep, model))
	fmt.Println("advised:", rep.Overall.Advice.TTL.D(), "=", rep.Overall.Advice.Quantile.D(), "+", rep.Overall.Advice.Jitter.D())
	// Output:
	// ttl in force: 2s trust: 1
	// advised: 1s = 900ms + 100ms
}
