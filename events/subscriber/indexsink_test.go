package subscriber_test

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/events/eventstest"
	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/events/wire"
	"github.com/warmroute/warmroute/index"
)

const sinkEndpoint = "10.9.0.1:8000"

// stored16 is a BlockStored of n 16-token blocks with hashes first..first+n-1,
// tokens starting at tok.
func stored16(first uint64, parent uint64, hasParent bool, tok, n int) wire.Event {
	ev := wire.Event{Kind: wire.KindBlockStored, ParentHash: parent, HasParent: hasParent, BlockSize: 16}
	for i := range n {
		ev.BlockHashes = append(ev.BlockHashes, first+uint64(i))
	}
	for i := range 16 * n {
		ev.TokenIDs = append(ev.TokenIDs, uint32(tok+i))
	}
	return ev
}

func batchOf(evs ...wire.Event) *wire.Batch { return &wire.Batch{Events: evs} }

// sinkCase applies some calls to a sink, then checks what the endpoint
// holds under id and which drops were counted.
type sinkCase struct {
	name        string
	apply       func(s *subscriber.IndexSink)
	id          index.Identity
	wantBlocks  int
	wantWeight  float64
	wantDropped map[string]float64
}

func indexSinkCases() []sinkCase {
	src := subscriber.Source{Model: testModel, Endpoint: sinkEndpoint}
	rank1 := subscriber.Source{Model: testModel, Endpoint: sinkEndpoint, DPRank: 1}
	lora := stored16(1, 0, false, 0, 2)
	lora.LoRAName = "adapter-a"
	cpu := stored16(1, 0, false, 0, 2)
	cpu.Medium = "CPU"
	badSize := stored16(1, 0, false, 0, 2)
	badSize.BlockSize = 32
	removed := wire.Event{Kind: wire.KindBlockRemoved, BlockHashes: []uint64{2}}
	unknownRemoved := wire.Event{Kind: wire.KindBlockRemoved, BlockHashes: []uint64{99}}
	cleared := wire.Event{Kind: wire.KindAllBlocksCleared}
	return []sinkCase{
		{"stored under the model", func(s *subscriber.IndexSink) { s.ApplyBatch(src, batchOf(stored16(1, 0, false, 0, 2))) },
			index.Identity{Model: testModel}, 2, 2, nil},
		{"stored under the adapter", func(s *subscriber.IndexSink) { s.ApplyBatch(src, batchOf(lora)) },
			index.Identity{Model: testModel, LoRA: "adapter-a"}, 2, 2, nil},
		{"adapter blocks do not match the base model", func(s *subscriber.IndexSink) { s.ApplyBatch(src, batchOf(lora)) },
			index.Identity{Model: testModel}, 0, 0, nil},
		{"medium weighs blocks", func(s *subscriber.IndexSink) { s.ApplyBatch(src, batchOf(cpu)) },
			index.Identity{Model: testModel}, 2, 1.6, nil},
		{"parent chains", func(s *subscriber.IndexSink) {
			s.ApplyBatch(src, batchOf(stored16(1, 0, false, 0, 2), stored16(3, 2, true, 32, 1)))
		}, index.Identity{Model: testModel}, 3, 3, nil},
		{"unknown parent left to the index", func(s *subscriber.IndexSink) { s.ApplyBatch(src, batchOf(stored16(3, 77, true, 32, 1))) },
			index.Identity{Model: testModel}, 0, 0, map[string]float64{"unknown_parent": 0}},
		{"removed shortens the run", func(s *subscriber.IndexSink) {
			s.ApplyBatch(src, batchOf(stored16(1, 0, false, 0, 2), removed))
		}, index.Identity{Model: testModel}, 1, 1, nil},
		{"unknown removal left to the index", func(s *subscriber.IndexSink) { s.ApplyBatch(src, batchOf(unknownRemoved)) },
			index.Identity{Model: testModel}, 0, 0, map[string]float64{"unknown_removed": 0}},
		{"all blocks cleared", func(s *subscriber.IndexSink) {
			s.ApplyBatch(src, batchOf(stored16(1, 0, false, 0, 2), cleared))
		}, index.Identity{Model: testModel}, 0, 0, nil},
		{"wrong block size left to the index", func(s *subscriber.IndexSink) { s.ApplyBatch(src, batchOf(badSize)) },
			index.Identity{Model: testModel}, 0, 0, map[string]float64{"block_size": 0}},
		{"rank out of range dropped", func(s *subscriber.IndexSink) {
			s.ApplyBatch(subscriber.Source{Model: testModel, Endpoint: sinkEndpoint, DPRank: 300},
				batchOf(stored16(1, 0, false, 0, 2)))
		}, index.Identity{Model: testModel}, 0, 0, map[string]float64{"rank": 1}},
		{"clearing one rank keeps the other", func(s *subscriber.IndexSink) {
			s.ApplyBatch(src, batchOf(stored16(1, 0, false, 0, 2)))
			s.ApplyBatch(rank1, batchOf(stored16(1, 0, false, 0, 2)))
			s.ClearSource(src)
		}, index.Identity{Model: testModel}, 2, 2, nil},
		{"clearing the endpoint drops every rank", func(s *subscriber.IndexSink) {
			s.ApplyBatch(src, batchOf(stored16(1, 0, false, 0, 2)))
			s.ApplyBatch(rank1, batchOf(stored16(1, 0, false, 0, 2)))
			s.ClearEndpoint(sinkEndpoint)
		}, index.Identity{Model: testModel}, 0, 0, nil},
	}
}

func TestIndexSink(t *testing.T) {
	for _, tc := range indexSinkCases() {
		t.Run(tc.name, func(t *testing.T) {
			ix, sm, reg := indexWithMetrics(t, index.Options{})
			tc.apply(subscriber.NewIndexSink(ix, sm))
			m := lookup(t, ix, tc.id, 3)
			if m.Blocks() != tc.wantBlocks || m.Weighted < tc.wantWeight-1e-9 || m.Weighted > tc.wantWeight+1e-9 {
				t.Fatalf("match = %+v, want %d blocks weighing %v", m, tc.wantBlocks, tc.wantWeight)
			}
			for reason, want := range tc.wantDropped {
				if got := eventstest.CounterValue(t, reg, "warmroute_events_sink_dropped_total", "reason", reason); got != want {
					t.Errorf("dropped{reason=%s} = %v, want %v", reason, got, want)
				}
			}
		})
	}
}

// TestIndexSinkLeavesIndexCountsToTheIndex: what the index counts itself
// (an unknown parent, an unknown removal, a block size mismatch) is counted
// there once, not again by the sink.
func TestIndexSinkLeavesIndexCountsToTheIndex(t *testing.T) {
	src := subscriber.Source{Model: testModel, Endpoint: sinkEndpoint}
	bad := stored16(1, 0, false, 0, 1)
	bad.BlockSize = 32
	tests := []struct {
		name  string
		ev    wire.Event
		count func(index.Stats) int64
	}{
		{"unknown parent", stored16(3, 77, true, 32, 1), func(st index.Stats) int64 { return st.UnknownParent }},
		{"unknown removal", wire.Event{Kind: wire.KindBlockRemoved, BlockHashes: []uint64{99}},
			func(st index.Stats) int64 { return st.UnknownRemoved }},
		{"block size", bad, func(st index.Stats) int64 { return st.BlockSizeMismatch }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix, m, reg := indexWithMetrics(t, index.Options{})
			subscriber.NewIndexSink(ix, m).ApplyBatch(src, batchOf(tt.ev))
			if got := tt.count(ix.Stats()); got != 1 {
				t.Fatalf("index counted %d, want 1", got)
			}
			mfs, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			for _, mf := range mfs {
				if mf.GetName() != "warmroute_events_sink_dropped_total" {
					continue
				}
				for _, m := range mf.GetMetric() {
					if m.GetCounter().GetValue() != 0 {
						t.Fatalf("sink re-counted it: %v", m)
					}
				}
			}
		})
	}
}

// lookup returns what sinkEndpoint holds of the first blocks 16-token blocks
// of the sequence 0, 1, 2, ... under id.
func lookup(t testing.TB, ix *index.Index, id index.Identity, blocks int) index.Match {
	t.Helper()
	toks := make([]uint32, 16*blocks)
	for i := range toks {
		toks[i] = uint32(i)
	}
	keys, err := index.AppendKeys(nil, id, 16, toks)
	if err != nil {
		t.Fatal(err)
	}
	return ix.Lookup(keys, []string{sinkEndpoint}, nil)[0]
}

// BenchmarkIndexSinkApply stores blocks and removes the same blocks in each
// batch, so every iteration does the full work of both on an index of steady
// size: in one removal event, or (/evictions) in one one-hash event per
// block, as vLLM reports evictions.
func BenchmarkIndexSinkApply(b *testing.B) {
	for _, evictions := range []bool{false, true} {
		for _, blocks := range []int{1, 16, 128} {
			name := benchName("blocks", blocks)
			if evictions {
				name = "evictions/" + name
			}
			b.Run(name, func(b *testing.B) {
				ix, err := index.New(index.Options{})
				if err != nil {
					b.Fatal(err)
				}
				s := subscriber.NewIndexSink(ix, nil)
				src := subscriber.Source{Model: testModel, Endpoint: sinkEndpoint}
				st := stored16(1, 0, false, 0, blocks)
				batch := batchOf(st, wire.Event{Kind: wire.KindBlockRemoved, BlockHashes: st.BlockHashes})
				if evictions {
					batch = batchOf(st)
					for _, h := range st.BlockHashes {
						batch.Events = append(batch.Events, removedOn(h, ""))
					}
				}
				for b.Loop() {
					s.ApplyBatch(src, batch)
				}
			})
		}
	}
}

func benchName(what string, n int) string { return fmt.Sprintf("%s=%d", what, n) }

// indexWithMetrics is an index with opts and the subscriber's metrics on a
// registry of their own, as most tests of the sink and subscriber need.
func indexWithMetrics(t testing.TB, opts index.Options) (*index.Index, *subscriber.Metrics, *prometheus.Registry) {
	t.Helper()
	ix, err := index.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	m, err := subscriber.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	return ix, m, reg
}
