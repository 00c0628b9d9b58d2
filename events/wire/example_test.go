package wire_test

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/warmroute/warmroute/events/wire"
)

func ExampleDecodeBatch() {
	// A vLLM batch: [ts, [events...], data_parallel_rank], events tagged by "type".
	payload, _ := msgpack.Marshal([]any{1700000000.0, []any{
		map[string]any{"type": "BlockStored", "block_hashes": []uint64{42}, "parent_block_hash": nil,
			"token_ids": []int{1, 2, 3, 4}, "block_size": 4, "medium": "GPU"},
		[]any{"BlockRemoved", []uint64{7}},
	}, 0})
	var b wire.Batch
	if err := wire.DecodeBatch(payload, &b); err != nil {
		fmt.Println(err)
		return
	}
	for _, ev := range b.Events {
		fmt.Println(ev.Kind, ev.BlockHashes, ev.TokenIDs)
	}
	// Output:
	// BlockStored [42] [1 2 3 4]
	// BlockRemoved [7] []
}
