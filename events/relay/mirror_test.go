package relay

import (
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/warmroute/warmroute/events/snapshot"
	"github.com/warmroute/warmroute/events/wire"
)

func storedEv(parent uint64, hasParent bool, medium string, tok uint32, hashes ...uint64) wire.Event {
	toks := make([]uint32, 4*len(hashes))
	for i := range toks {
		toks[i] = tok + uint32(i)
	}
	return wire.Event{Kind: wire.KindBlockStored, BlockHashes: hashes, ParentHash: parent, HasParent: hasParent,
		TokenIDs: toks, BlockSize: 4, Medium: medium}
}

func removedEv(medium string, hashes ...uint64) wire.Event {
	return wire.Event{Kind: wire.KindBlockRemoved, BlockHashes: hashes, Medium: medium}
}

// mirrored decodes a full snapshot of mr: blocks by hash, in the order sent.
func mirrored(t *testing.T, mr *mirror, maxChunk int) (snapshot.Header, []snapshot.Block) {
	t.Helper()
	chunks, n := mr.snapshot(maxChunk)
	var out []snapshot.Block
	var h snapshot.Header
	for i, data := range chunks {
		var c snapshot.Chunk
		if err := snapshot.Decode(data, &c); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
		if int(c.Header.Index) != i || c.Header.Last != (i == len(chunks)-1) {
			t.Fatalf("chunk %d header %+v of %d", i, c.Header, len(chunks))
		}
		if len(data) > maxChunk && len(c.Blocks) > 1 {
			t.Fatalf("chunk %d is %d bytes with %d blocks, over %d", i, len(data), len(c.Blocks), maxChunk)
		}
		h = c.Header
		for _, b := range c.Blocks {
			b.Tokens = slices.Clone(b.Tokens)
			out = append(out, b)
		}
	}
	if n != len(out) {
		t.Fatalf("snapshot reported %d blocks, decoded %d", n, len(out))
	}
	// Parents come before children.
	seen := map[uint64]bool{}
	for _, b := range out {
		if b.HasParent && !seen[b.Parent] {
			if _, inMirror := mr.index[b.Parent]; inMirror {
				t.Fatalf("block %d sent before its parent %d", b.Hash, b.Parent)
			}
		}
		seen[b.Hash] = true
	}
	return h, out
}

// held lists "hash:media" of the snapshot's blocks, sorted.
func held(bs []snapshot.Block) []string {
	var out []string
	for _, b := range bs {
		out = append(out, fmt.Sprintf("%d:%d", b.Hash, b.Media))
	}
	sort.Strings(out)
	return out
}

func TestMirrorFollowsTheEngine(t *testing.T) {
	type step struct {
		events []wire.Event
		want   []string // hash:media bits ("" medium is bit 1, "CPU" bit 2)
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"store chains", []step{
			{[]wire.Event{storedEv(0, false, "", 0, 1, 2, 3)}, []string{"1:1", "2:1", "3:1"}},
			{[]wire.Event{storedEv(3, true, "", 100, 4)}, []string{"1:1", "2:1", "3:1", "4:1"}},
		}},
		{"re-announcement is idempotent (kv_cache_report_mode=full)", []step{
			{[]wire.Event{storedEv(0, false, "", 0, 1, 2), storedEv(0, false, "", 0, 1, 2)}, []string{"1:1", "2:1"}},
			{[]wire.Event{removedEv("", 2)}, []string{"1:1"}},
		}},
		{"media are separate copies", []step{
			{[]wire.Event{storedEv(0, false, "", 0, 1), {Kind: wire.KindBlockStored, BlockHashes: []uint64{1}, Medium: "CPU"}},
				[]string{"1:3"}},
			{[]wire.Event{removedEv("", 1)}, []string{"1:2"}},
			{[]wire.Event{removedEv("CPU", 1)}, nil},
		}},
		{"removed parent stays for its children, goes with them", []step{
			{[]wire.Event{storedEv(0, false, "", 0, 1, 2, 3)}, []string{"1:1", "2:1", "3:1"}},
			{[]wire.Event{removedEv("", 1, 2)}, []string{"1:0", "2:0", "3:1"}},
			{[]wire.Event{removedEv("", 3)}, nil},
		}},
		{"all blocks cleared", []step{
			{[]wire.Event{storedEv(0, false, "", 0, 1, 2), {Kind: wire.KindAllBlocksCleared}}, nil},
			{[]wire.Event{storedEv(0, false, "", 0, 5)}, []string{"5:1"}},
		}},
		{"hash reused for other content", []step{
			{[]wire.Event{storedEv(0, false, "", 0, 1, 2)}, []string{"1:1", "2:1"}},
			{[]wire.Event{storedEv(0, false, "", 50, 2)}, []string{"1:1", "2:1"}},
		}},
		{"unknown removal ignored", []step{
			{[]wire.Event{removedEv("", 9)}, nil},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mr := newMirror(100, mustMetrics(t))
			for i, s := range tc.steps {
				mr.apply(uint64(i), &wire.Batch{Events: s.events})
				h, got := mirrored(t, mr, 1<<20)
				if !slices.Equal(held(got), s.want) {
					t.Fatalf("step %d: mirror holds %v, want %v", i, held(got), s.want)
				}
				if h.Seq != uint64(i) || !h.HasSeq {
					t.Fatalf("step %d: snapshot seq %d (has %v)", i, h.Seq, h.HasSeq)
				}
			}
		})
	}
}

// TestMirrorReusedHashTakesNewContent: the snapshot sends the new tokens.
func TestMirrorReusedHashTakesNewContent(t *testing.T) {
	mr := newMirror(100, mustMetrics(t))
	mr.apply(0, &wire.Batch{Events: []wire.Event{storedEv(0, false, "", 0, 1)}})
	mr.apply(1, &wire.Batch{Events: []wire.Event{storedEv(0, false, "", 50, 1)}})
	_, got := mirrored(t, mr, 1<<20)
	if len(got) != 1 || !slices.Equal(got[0].Tokens, []uint32{50, 51, 52, 53}) {
		t.Fatalf("snapshot = %+v", got)
	}
}

// TestMirrorBoundCountsDrops: beyond the bound blocks are dropped and counted.
func TestMirrorBoundCountsDrops(t *testing.T) {
	m := mustMetrics(t)
	mr := newMirror(2, m)
	mr.apply(0, &wire.Batch{Events: []wire.Event{storedEv(0, false, "", 0, 1, 2, 3, 4)}})
	if got := len(mr.index); got != 2 {
		t.Fatalf("mirror holds %d blocks, want 2", got)
	}
	if got := counterValue(t, m.mirrorDropped.WithLabelValues(dropFull)); got != 2 {
		t.Fatalf("dropped{full} = %v, want 2", got)
	}
	mr.apply(1, &wire.Batch{Events: []wire.Event{{Kind: wire.KindBlockStored, BlockHashes: []uint64{77}, Medium: "CPU"}}})
	if got := counterValue(t, m.mirrorDropped.WithLabelValues(dropUnknownHash)); got != 1 {
		t.Fatalf("dropped{unknown_hash} = %v, want 1", got)
	}
	short := storedEv(0, false, "", 0, 8, 9)
	short.TokenIDs = short.TokenIDs[:5]
	mr.reset()
	mr.apply(2, &wire.Batch{Events: []wire.Event{short}})
	if got := counterValue(t, m.mirrorDropped.WithLabelValues(dropTokens)); got != 1 || len(mr.index) != 1 {
		t.Fatalf("dropped{tokens} = %v with %d blocks, want 1 and 1", got, len(mr.index))
	}
}

// TestMirrorEpochChanges: a reset or an undecodable batch starts a new
// epoch and empties the mirror; ordinary batches keep it.
func TestMirrorEpochChanges(t *testing.T) {
	mr := newMirror(100, mustMetrics(t))
	e0 := mr.Epoch()
	if e0 == 0 || e0 >= 1<<53 {
		t.Fatalf("epoch %d: want non-zero below 2^53", e0)
	}
	mr.apply(0, &wire.Batch{Events: []wire.Event{storedEv(0, false, "", 0, 1)}})
	if mr.Epoch() != e0 {
		t.Fatal("a batch changed the epoch")
	}
	e1 := mr.reset()
	if e1 == e0 || len(mr.index) != 0 || mr.hasSeq {
		t.Fatalf("reset: epoch %d (was %d), %d blocks, hasSeq %v", e1, e0, len(mr.index), mr.hasSeq)
	}
	mr.apply(1, &wire.Batch{Events: []wire.Event{storedEv(0, false, "", 0, 1)}})
	if e2 := mr.apply(2, nil); e2 == e1 || len(mr.index) != 0 {
		t.Fatalf("undecodable batch: epoch %d (was %d), %d blocks", e2, e1, len(mr.index))
	}
}

// TestMirrorSnapshotChunks: small chunks still carry every block once,
// parents first (checked by mirrored), across repeated snapshots.
func TestMirrorSnapshotChunks(t *testing.T) {
	mr := newMirror(10000, mustMetrics(t))
	var hs []uint64
	for i := range 500 {
		hs = append(hs, uint64(1000+i))
	}
	mr.apply(0, &wire.Batch{Events: []wire.Event{storedEv(0, false, "", 0, hs...), storedEv(1100, true, "", 9, 5000, 5001)}})
	for range 3 {
		_, got := mirrored(t, mr, 300)
		if len(got) != 502 {
			t.Fatalf("snapshot has %d blocks, want 502", len(got))
		}
	}
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
