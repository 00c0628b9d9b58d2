package subscriber_test

import (
	"testing"

	"github.com/warmroute/warmroute/events/eventstest"
	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/events/wire"
	"github.com/warmroute/warmroute/index"
)

// removedOn is a one-hash BlockRemoved on medium, as vLLM sends each block
// its cache evicts.
func removedOn(h uint64, medium string) wire.Event {
	return wire.Event{Kind: wire.KindBlockRemoved, BlockHashes: []uint64{h}, Medium: medium}
}

// TestIndexSinkMergesRemovals: a batch applied at once, where the sink
// merges consecutive removals into one change, leaves the index holding
// exactly what applying its events one batch each does (every chain prefix
// looked up, on both media), with the same index counters and the same
// per-event metrics.
func TestIndexSinkMergesRemovals(t *testing.T) {
	src := subscriber.Source{Model: testModel, Endpoint: sinkEndpoint}
	gpu := stored16(1, 0, false, 0, 8) // hashes 1..8: the sequence's first 8 blocks
	cpu := stored16(101, 0, false, 0, 8)
	cpu.Medium = "CPU" // the same blocks, offloaded: a second copy
	long := stored16(1000, 0, false, 0, 5000)
	var longGone []wire.Event
	for h := uint64(1000 + 4999); h >= 1010; h-- { // more than one merge buffer
		longGone = append(longGone, removedOn(h, ""))
	}
	cases := []struct {
		name   string
		events []wire.Event
	}{
		{"evictions from the tail", []wire.Event{gpu, removedOn(8, ""), removedOn(7, "GPU"), removedOn(6, "")}},
		{"media alternate", []wire.Event{gpu, cpu, removedOn(8, ""), removedOn(108, "CPU"), removedOn(7, ""),
			removedOn(107, "CPU"), removedOn(106, "CPU"), removedOn(6, "")}},
		{"unknown hashes among them", []wire.Event{gpu, removedOn(99, ""), removedOn(8, ""), removedOn(98, ""), removedOn(7, "")}},
		{"a hash removed twice", []wire.Event{gpu, removedOn(8, ""), removedOn(8, ""), removedOn(7, "")}},
		{"removed, stored again, removed", []wire.Event{gpu, removedOn(8, ""), removedOn(7, ""),
			stored16(7, 6, true, 96, 2), removedOn(8, ""), removedOn(5, "")}},
		{"a multi-hash removal among one-hash ones", []wire.Event{gpu, removedOn(8, ""),
			{Kind: wire.KindBlockRemoved, BlockHashes: []uint64{7, 6}}, removedOn(5, "")}},
		{"a step of evictions then its store", append(append([]wire.Event{long}, longGone...), stored16(1010, 1009, true, 160, 3))},
		{"a removal longer than the merge buffer, then one-hash ones", []wire.Event{long,
			{Kind: wire.KindBlockRemoved, BlockHashes: long.BlockHashes[12:4900]}, removedOn(1011, ""), removedOn(1010, ""), removedOn(1004, "")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			merged, mm, mreg := indexWithMetrics(t, index.Options{MaxBytes: 1 << 30})
			subscriber.NewIndexSink(merged, mm).ApplyBatch(src, batchOf(tc.events...))
			single, sm, sreg := indexWithMetrics(t, index.Options{MaxBytes: 1 << 30})
			sink := subscriber.NewIndexSink(single, sm)
			for _, ev := range tc.events {
				sink.ApplyBatch(src, batchOf(ev))
			}
			for blocks := 1; blocks <= 16; blocks++ {
				got, want := lookup(t, merged, index.Identity{Model: testModel}, blocks), lookup(t, single, index.Identity{Model: testModel}, blocks)
				if got.Blocks() != want.Blocks() || got.Weighted != want.Weighted {
					t.Fatalf("first %d blocks: merged holds %+v, one by one %+v", blocks, got, want)
				}
			}
			gs, ws := merged.Stats(), single.Stats()
			if gs.StoredBlocks != ws.StoredBlocks || gs.RemovedBlocks != ws.RemovedBlocks || gs.UnknownRemoved != ws.UnknownRemoved || gs.Keys != ws.Keys || gs.Entries != ws.Entries {
				t.Errorf("stats: merged %+v, one by one %+v", gs, ws)
			}
			for _, kind := range []string{"BlockStored", "BlockRemoved"} {
				got := eventstest.CounterValue(t, mreg, "warmroute_events_sink_events_total", "kind", kind)
				want := eventstest.CounterValue(t, sreg, "warmroute_events_sink_events_total", "kind", kind)
				if got != want {
					t.Errorf("%s events counted: merged %v, one by one %v", kind, got, want)
				}
			}
		})
	}
}

// TestIndexSinkMergedRemovalRejected: a merged removal the index rejects
// (an endpoint it cannot take) counts each of its events as rejected.
func TestIndexSinkMergedRemovalRejected(t *testing.T) {
	ix, m, reg := indexWithMetrics(t, index.Options{})
	src := subscriber.Source{Model: testModel, Endpoint: sinkEndpoint, DPRank: 300}
	var evs []wire.Event
	for h := range uint64(5) {
		evs = append(evs, removedOn(h+1, ""))
	}
	subscriber.NewIndexSink(ix, m).ApplyBatch(src, batchOf(evs...))
	if got := eventstest.CounterValue(t, reg, "warmroute_events_sink_events_total", "result", "rejected"); got != 5 {
		t.Errorf("rejected events = %v, want 5", got)
	}
}
