package index_test

import (
	"fmt"
	"time"

	"github.com/warmroute/warmroute/index"
)

// Example shows the life of a prefix: a routing decision predicts it on an
// endpoint, a later request matches the prediction, and the engine's
// BlockStored event confirms it.
func Example() {
	ix, err := index.New(index.Options{
		BlockSize: 4,
		Observer: index.ObserverFunc(func(o index.Outcome) {
			fmt.Printf("decision %d: %d blocks %s on %s\n", o.Decision, o.Blocks, o.Kind, o.Endpoint)
		}),
	})
	if err != nil {
		panic(err)
	}
	id := index.Identity{Model: "llama", CacheSalt: "tenant-a"}
	prompt := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10} // two full blocks and a tail
	keys, _ := index.AppendKeys(nil, id, ix.BlockSize(), prompt)

	// The router sent the request to 10.0.0.1:8000 and predicts its blocks.
	ix.Speculate("10.0.0.1:8000", keys, 42, 2*time.Second)
	fmt.Printf("%+v\n", ix.Lookup(keys, []string{"10.0.0.1:8000", "10.0.0.2:8000"}, nil))

	// The engine reports the blocks it stored, with its own hashes.
	ix.Store(index.Stored{
		Endpoint: "10.0.0.1:8000", Hashes: []uint64{0xa1, 0xa2},
		Tokens: []uint32{1, 2, 3, 4, 5, 6, 7, 8}, BlockSize: 4, Identity: id,
	})
	fmt.Printf("%+v\n", ix.Lookup(keys, []string{"10.0.0.1:8000", "10.0.0.2:8000"}, nil))
	// Output:
	// [{Confirmed:0 Speculative:2 Weighted:0} {Confirmed:0 Speculative:0 Weighted:0}]
	// decision 42: 2 blocks confirmed on 10.0.0.1:8000
	// [{Confirmed:2 Speculative:0 Weighted:2} {Confirmed:0 Speculative:0 Weighted:0}]
}

// ExampleAppendKeys shows that a cache salt isolates otherwise identical
// prompts, and that a prompt shorter than one block has no keys.
func ExampleAppendKeys() {
	prompt := []int{1, 2, 3, 4, 5, 6, 7, 8}
	a, _ := index.AppendKeys(nil, index.Identity{Model: "m", CacheSalt: "a"}, 4, prompt)
	b, _ := index.AppendKeys(nil, index.Identity{Model: "m", CacheSalt: "b"}, 4, prompt)
	short, _ := index.AppendKeys(nil, index.Identity{Model: "m"}, 4, prompt[:3])
	fmt.Println(len(a), a[0] == b[0], a[1] == b[1], len(short))
	// Output: 2 false false 0
}
