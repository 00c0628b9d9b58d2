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

// TestIndexSinkFoldedRemovals: vLLM messages decoded as the subscriber
// decodes them (wire.Batch.FoldRemovals: a run of one-hash removals is one
// event) leave the index holding exactly what the same messages decoded
// event by event do, every chain prefix looked up, with the same index
// counters and the same per-event metrics.
func TestIndexSinkFoldedRemovals(t *testing.T) {
	src := subscriber.Source{Model: testModel, Endpoint: sinkEndpoint}
	chain := stored16(1, 0, false, 0, 8) // hashes 1..8 over tokens 0..127
	other := stored16(500, 0, false, 5000, 2)
	messages := [][]byte{
		subscriber.MarshalVLLM(chain.BlockHashes, nil, chain.TokenIDs, nil),
		// A step evicting the chain's tail (and a hash it never held), then storing another chain.
		subscriber.MarshalVLLM(other.BlockHashes, nil, other.TokenIDs, []uint64{8, 7, 99, 6}),
		// Another step evicting one more block.
		subscriber.MarshalVLLM([]uint64{502}, uint64(501), other.TokenIDs[:16], []uint64{5}),
	}
	folded, fm, freg := indexWithMetrics(t, index.Options{MaxBytes: 1 << 30})
	plain, pm, preg := indexWithMetrics(t, index.Options{MaxBytes: 1 << 30})
	fsink, psink := subscriber.NewIndexSink(folded, fm), subscriber.NewIndexSink(plain, pm)
	fb := wire.Batch{FoldRemovals: true}
	var pb wire.Batch
	for i, msg := range messages {
		if err := wire.DecodeBatch(msg, &fb); err != nil {
			t.Fatal(err)
		}
		if err := wire.DecodeBatch(msg, &pb); err != nil {
			t.Fatal(err)
		}
		if i == 1 && (len(fb.Events) != 2 || fb.Events[0].Folded != 3 || len(pb.Events) != 5) {
			t.Fatalf("message %d decoded to %d events (first folded %d) and %d unfolded, want 2 (3) and 5", i, len(fb.Events), fb.Events[0].Folded, len(pb.Events))
		}
		fsink.ApplyBatch(src, &fb)
		psink.ApplyBatch(src, &pb)
	}
	for blocks := 1; blocks <= 8; blocks++ {
		got, want := lookup(t, folded, index.Identity{Model: testModel}, blocks), lookup(t, plain, index.Identity{Model: testModel}, blocks)
		if got.Blocks() != want.Blocks() || got.Weighted != want.Weighted {
			t.Fatalf("first %d blocks: folded holds %+v, unfolded %+v", blocks, got, want)
		}
	}
	if got := lookup(t, folded, index.Identity{Model: testModel}, 8).Blocks(); got != 4 {
		t.Errorf("the chain matches %d blocks after evicting its last four, want 4", got)
	}
	gs, ws := folded.Stats(), plain.Stats()
	if gs.StoredBlocks != ws.StoredBlocks || gs.RemovedBlocks != ws.RemovedBlocks || gs.UnknownRemoved != ws.UnknownRemoved || gs.Keys != ws.Keys || gs.Entries != ws.Entries {
		t.Errorf("stats: folded %+v, unfolded %+v", gs, ws)
	}
	for kind, want := range map[string]float64{"BlockStored": 3, "BlockRemoved": 5} {
		got := eventstest.CounterValue(t, freg, "warmroute_events_sink_events_total", "kind", kind)
		if plainGot := eventstest.CounterValue(t, preg, "warmroute_events_sink_events_total", "kind", kind); got != want || plainGot != want {
			t.Errorf("%s events counted: folded %v, unfolded %v, want %v", kind, got, plainGot, want)
		}
	}
}
