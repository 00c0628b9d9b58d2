package llmdbench

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/llm-d/llm-d-kv-cache/pkg/kvcache/kvblock"
	"github.com/llm-d/llm-d-kv-cache/pkg/kvevents"
	"github.com/llm-d/llm-d-kv-cache/pkg/kvevents/engineadapter"
)

// The work of warmroute's BenchmarkIngest/steady (events/subscriber), done
// by llm-d's production ingestion path: the same vLLM messages (a
// BlockStored of 16 blocks of 16 Qwen 3 token ids of English prose, chained
// to the same endpoint's previous chain, and a BlockRemoved of the 16 blocks
// stored half a cycle earlier, every integer in its smallest msgpack form),
// for the same 8 endpoints, with half of 16,384 chains (131k blocks)
// resident, handed to kvevents.Pool.AddTask as its ZMQ subscriber hands
// them over; the pool's worker decodes them with the vLLM adapter, keys the
// tokens and updates the in-memory kvblock index. The first cycle fills the
// index before timing.

const (
	ingestEndpoints = 8
	ingestBlocks    = 16
	ingestBS        = 16
	ingestChains    = 16384
)

// proseIDs reads the Qwen 3 ids of the golden corpus's long documents, as
// warmroute's benchmark draws them (tokenizer/testdata/golden.json.gz).
var proseIDs = sync.OnceValue(func() []uint32 {
	f, err := os.Open(filepath.Join("..", "..", "..", "tokenizer", "testdata", "golden.json.gz"))
	if err != nil {
		panic(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		panic(err)
	}
	var g struct {
		Texts    []string `json:"texts"`
		Families map[string]struct {
			Plain [][]uint32 `json:"plain"`
		} `json:"families"`
	}
	if err := json.NewDecoder(zr).Decode(&g); err != nil {
		panic(err)
	}
	var ids []uint32
	for i, t := range g.Texts {
		if len(t) > 2000 {
			ids = append(ids, g.Families["qwen3"].Plain[i]...)
		}
	}
	return ids
})

func ingestTokens(c int) []uint32 {
	ids := proseIDs()
	toks := make([]uint32, ingestBlocks*ingestBS)
	for i := range toks {
		toks[i] = ids[(c*7919+i*104729)%len(ids)]
	}
	return toks
}

func ingestHashes(c int) []uint64 {
	hs := make([]uint64, ingestBlocks)
	for i := range hs {
		hs[i] = uint64(c)<<20 | uint64(i) | 1<<63
	}
	return hs
}

func ingestParent(c int) (int, bool) {
	prev := c - ingestEndpoints
	return prev, prev >= 0 && (c/ingestEndpoints)%64 != 0
}

// ingestPayload is message c: chain c stored, the chain half a cycle
// before removed.
func ingestPayload(c int) []byte {
	var parent any
	if prev, ok := ingestParent(c); ok {
		parent = ingestHashes(prev)[ingestBlocks-1]
	}
	events := []any{[]any{"BlockStored", ingestHashes(c), parent, ingestTokens(c), ingestBS, nil, "GPU", nil, nil}}
	old := c - ingestChains/2
	if old < 0 {
		old += ingestChains
	}
	events = append(events, []any{"BlockRemoved", ingestHashes(old), "GPU"})
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	if err := enc.Encode([]any{1.7e9, events, 0}); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// doneIndex is the kvblock index with a signal after each message's last
// Evict, so the benchmark knows the pool's worker has applied the message.
type doneIndex struct {
	kvblock.Index
	evicts int
	done   chan struct{}
}

func (d *doneIndex) Evict(ctx context.Context, key kvblock.BlockHash, kt kvblock.KeyType, entries []kvblock.PodEntry) error {
	err := d.Index.Evict(ctx, key, kt, entries)
	if d.evicts++; d.evicts%ingestBlocks == 0 {
		d.done <- struct{}{}
	}
	return err
}

// BenchmarkIngestSteady is warmroute's BenchmarkIngest/steady done by
// llm-d's kvevents pool and kvblock index: ns/op and cpu-ns/op per message
// (16 blocks stored, 16 removed), blocks/cpu-s as warmroute reports it.
func BenchmarkIngestSteady(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mem, err := kvblock.NewInMemoryIndex(&kvblock.InMemoryIndexConfig{Size: 4 * ingestChains * ingestBlocks, PodCacheSize: ingestEndpoints})
	if err != nil {
		b.Fatal(err)
	}
	ix := &doneIndex{Index: mem, done: make(chan struct{}, 1)}
	tp, err := kvblock.NewChunkedTokenDatabase(&kvblock.TokenProcessorConfig{BlockSizeTokens: ingestBS})
	if err != nil {
		b.Fatal(err)
	}
	pool := kvevents.NewPool(&kvevents.Config{Concurrency: 1}, ix, tp, engineadapter.NewVLLMAdapter())
	pool.Start(ctx)
	defer pool.Shutdown(ctx)

	payloads := make([][]byte, ingestChains)
	for c := range payloads {
		payloads[c] = ingestPayload(c)
	}
	send := func(c int) {
		// A fresh payload copy per message, as a ZMQ receive delivers it.
		p := append([]byte(nil), payloads[c%ingestChains]...)
		topic := fmt.Sprintf("kv@10.9.0.%d:8000@m", c%ingestEndpoints+1)
		pool.AddTask(&kvevents.RawMessage{Topic: topic, Sequence: uint64(c), Payload: p})
		select {
		case <-ix.done:
		case <-time.After(10 * time.Second):
			b.Fatalf("message %d: the pool did not evict its blocks", c)
		}
	}
	for c := range ingestChains { // the first cycle fills the index
		send(c)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuNow()
	for i := range b.N {
		send(ingestChains + i)
	}
	cpu := cpuNow() - start
	b.StopTimer()
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(b.N*ingestBlocks)/cpu.Seconds(), "blocks/cpu-s")
	// The index must hold what the engines hold: the last message's chain,
	// and not the chain it removed.
	last := (ingestChains + b.N - 1) % ingestChains
	got, err := mem.GetRequestKey(ctx, kvblock.BlockHash(ingestHashes(last)[ingestBlocks-1]))
	if err != nil || got == kvblock.EmptyBlockHash {
		b.Fatalf("last stored block not in the index: %v, %v", got, err)
	}
	gone := (last - ingestChains/2 + ingestChains) % ingestChains
	if k, err := mem.GetRequestKey(ctx, kvblock.BlockHash(ingestHashes(gone)[ingestBlocks-1])); err == nil {
		b.Fatalf("removed block still maps to request key %v", k)
	}
}
