package wire

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchPayload is a vLLM batch of events BlockStored events, each with
// blocks blocks of 16 tokens drawn from a 150k vocabulary.
func benchPayload(events, blocks int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	evs := make([]any, events)
	for e := range evs {
		hashes, toks := randomBlocks(rng, blocks)
		evs[e] = storedMap(hashes, rng.Uint64(), toks, 16)
	}
	return pack(vllmBatch(evs...))
}

// randomBlocks is blocks random block hashes and their 16 tokens each, drawn
// from a 150k vocabulary.
func randomBlocks(rng *rand.Rand, blocks int) (hashes, toks arr) {
	hashes, toks = make(arr, blocks), make(arr, blocks*16)
	for i := range hashes {
		hashes[i] = rng.Uint64()
	}
	for i := range toks {
		toks[i] = rng.IntN(150000)
	}
	return hashes, toks
}

// stepPayload is what vLLM 0.33 sends for a step that stored blocks blocks
// into a full cache: one one-hash BlockRemoved map per evicted block, then
// the BlockStored.
func stepPayload(blocks int) []byte {
	rng := rand.New(rand.NewPCG(3, 4))
	var evs []any
	for range blocks {
		evs = append(evs, obj{"type", "BlockRemoved", "block_hashes", arr{rng.Uint64()}, "medium", "GPU", "group_idx", 0})
	}
	hashes, toks := randomBlocks(rng, blocks)
	evs = append(evs, storedMap(hashes, rng.Uint64(), toks, 16, "group_idx", 0, "kv_cache_spec_kind", "full_attention"))
	return pack(vllmBatch(evs...))
}

func BenchmarkDecodeBatch(b *testing.B) {
	for _, size := range []struct{ events, blocks int }{{1, 1}, {1, 16}, {4, 16}, {16, 16}} {
		name := fmt.Sprintf("events=%d/blocks=%d", size.events, size.blocks)
		b.Run(name, func(b *testing.B) { benchDecode(b, benchPayload(size.events, size.blocks)) })
	}
	// A step's evictions and its store, as vLLM 0.33 sends them.
	for _, blocks := range []int{16, 512} {
		b.Run(fmt.Sprintf("step/blocks=%d", blocks), func(b *testing.B) { benchDecode(b, stepPayload(blocks)) })
	}
}

func benchDecode(b *testing.B, payload []byte) {
	var batch Batch
	if err := DecodeBatch(payload, &batch); err != nil {
		b.Fatal(err)
	}
	blocks := batch.Blocks()
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := DecodeBatch(payload, &batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(blocks)*float64(b.N)/b.Elapsed().Seconds(), "blocks/s")
}
