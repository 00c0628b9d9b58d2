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
		hashes := make(arr, blocks)
		toks := make(arr, blocks*16)
		for i := range hashes {
			hashes[i] = rng.Uint64()
		}
		for i := range toks {
			toks[i] = rng.IntN(150000)
		}
		evs[e] = storedMap(hashes, rng.Uint64(), toks, 16)
	}
	return pack(vllmBatch(evs...))
}

func BenchmarkDecodeBatch(b *testing.B) {
	for _, size := range []struct{ events, blocks int }{{1, 1}, {1, 16}, {4, 16}, {16, 16}} {
		name := fmt.Sprintf("events=%d/blocks=%d", size.events, size.blocks)
		b.Run(name, func(b *testing.B) { benchDecode(b, benchPayload(size.events, size.blocks)) })
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
