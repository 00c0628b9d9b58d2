package subscriber_test

import (
	"fmt"

	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/events/wire"
	"github.com/warmroute/warmroute/index"
)

// A router feeds decoded engine batches to the index through an IndexSink;
// a Subscriber normally makes these calls.
func ExampleIndexSink() {
	ix, _ := index.New(index.Options{BlockSize: 4})
	sink := subscriber.NewIndexSink(ix, nil)
	src := subscriber.Source{Model: "qwen", Endpoint: "10.0.0.1:8000"}
	sink.ApplyBatch(src, &wire.Batch{Events: []wire.Event{{Kind: wire.KindBlockStored,
		BlockHashes: []uint64{0xa, 0xb}, TokenIDs: []uint32{1, 2, 3, 4, 5, 6, 7, 8}, BlockSize: 4}}})

	keys, _ := index.AppendKeys(nil, index.Identity{Model: "qwen"}, 4, []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9})
	m := ix.Lookup(keys, []string{src.Endpoint}, nil)[0]
	fmt.Println("confirmed blocks:", m.Confirmed)
	// Output: confirmed blocks: 2
}
