package index

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestBatchedEventsMatchBlockByBlock applies each event once as one Store or
// Remove (taking the batched path, or its block-by-block fallback) and once
// block by block through storeBlock and removeBlock, and wants the same index: the same matches
// for every prefix of the stored blocks, the same counts. The cases cover a
// batch boundary, hashes repeated inside one event and a hash rebound to
// other content inside one event (the fallback), and re-announced blocks.
func TestBatchedEventsMatchBlockByBlock(t *testing.T) {
	const ep = "10.0.0.1:8000"
	type op = batchOp
	seq := func(from, n int) []uint64 { return hashes(1, from, n) }
	cases := []struct {
		name string
		ops  []op
	}{
		{"one batch and a part", []op{{hashes: seq(0, 21)}}},
		{"predicted, then stored", []op{{predict: true, hashes: seq(0, 21)}, {hashes: seq(0, 21)}, {remove: true, hashes: seq(3, 7)}}},
		{"partly predicted, then stored", []op{{predict: true, hashes: seq(0, 5)}, {hashes: seq(0, 18)}}},
		{"stored twice, removed once", []op{{hashes: seq(0, 9)}, {hashes: seq(0, 9)}, {remove: true, hashes: seq(0, 9)}}},
		{"removed with a repeated hash", []op{{hashes: seq(0, 6)}, {remove: true, hashes: []uint64{seq(0, 6)[2], seq(0, 6)[2], seq(0, 6)[5]}}}},
		{"hash repeated in one store", []op{{hashes: append(seq(0, 3), seq(0, 1)...)}}},
		{"hash rebound to other blocks", []op{{hashes: seq(0, 4)}, {hashes: seq(0, 4), from: 4}}},
		{"unknown hashes removed", []op{{hashes: seq(0, 3)}, {remove: true, hashes: seq(2, 10)}}},
	}
	for _, tc := range cases {
		for _, shards := range []int{4, 128} { // sorted as a bit set, and by insertSorted
			t.Run(fmt.Sprintf("%s/shards=%d", tc.name, shards), func(t *testing.T) {
				testBatchedOps(t, ep, shards, tc.ops)
			})
		}
	}
}

// batchOp is one event of TestBatchedEventsMatchBlockByBlock.
type batchOp struct {
	remove  bool
	predict bool // Speculate the blocks' keys for the endpoint (in both indexes)
	hashes  []uint64
	from    int // first block of sequence 1 the stored tokens are
}

// testBatchedOps applies ops to two indexes, batched and block by block, and
// compares them.
func testBatchedOps(t *testing.T, ep string, shards int, ops []batchOp) {
	whole, split := newFixture(t, Options{Shards: shards}), newFixture(t, Options{Shards: shards})
	var unknownWhole, unknownSplit int
	maxBlocks := 0
	for _, o := range ops {
		if o.predict {
			for _, f := range []*fixture{whole, split} {
				if _, err := f.ix.Speculate(ep, keysOf(t, 1, len(o.hashes)), 7, time.Hour); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		if o.remove {
			u, err := whole.ix.Remove(ep, 0, o.hashes, MediumGPU)
			if err != nil {
				t.Fatal(err)
			}
			unknownWhole += u
			unknownSplit += removeOneByOne(t, split.ix, ep, o.hashes)
			continue
		}
		n := len(o.hashes)
		maxBlocks = max(maxBlocks, o.from+n)
		toks := tokens(1, o.from, n)
		ev := Stored{Endpoint: ep, Hashes: o.hashes, Tokens: toks, BlockSize: testBS, Identity: testID, Medium: MediumGPU}
		if o.from > 0 {
			// Chain from the block before, by the key's own hash in
			// the split index and by the whole event's in this one.
			ev.Parent, ev.HasParent = 1<<40|uint64(o.from), true
			for _, f := range []*fixture{whole, split} {
				if _, err := f.ix.Store(Stored{Endpoint: ep, Hashes: []uint64{ev.Parent}, Tokens: tokens(1, 0, o.from),
					BlockSize: testBS, Identity: testID, Medium: MediumCPU}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := whole.ix.Store(ev); err != nil {
			t.Fatal(err)
		}
		storeOneByOne(t, split.ix, ev)
	}
	if unknownWhole != unknownSplit {
		t.Errorf("Remove reported %d unknown hashes, block by block %d", unknownWhole, unknownSplit)
	}
	for n := 1; n <= maxBlocks; n++ {
		keys := keysOf(t, 1, n)
		got, want := whole.ix.Lookup(keys, []string{ep}, nil), split.ix.Lookup(keys, []string{ep}, nil)
		if !slices.Equal(got, want) {
			t.Errorf("Lookup of %d blocks = %+v, block by block %+v", n, got, want)
		}
	}
	gs, ws := whole.ix.Stats(), split.ix.Stats()
	if predicted := slices.ContainsFunc(ops, func(o batchOp) bool { return o.predict }); predicted && gs.Outcomes[Confirmed] == 0 {
		t.Errorf("no prediction confirmed: %+v", gs.Outcomes)
	}
	if gs.Keys != ws.Keys || gs.Entries != ws.Entries || gs.Reannounced != ws.Reannounced || gs.Outcomes != ws.Outcomes {
		t.Errorf("stats = %+v\nblock by block %+v", gs, ws)
	}
}

// storeOneByOne applies ev as Store did before batching: storeBlock per block.
func storeOneByOne(t *testing.T, ix *Index, ev Stored) {
	t.Helper()
	hd, err := ix.holderFor(ev.Endpoint, ev.Rank, true)
	if err != nil {
		t.Fatal(err)
	}
	out := getPending()
	defer putPending(out)
	hd.mu.Lock()
	parent := ev.Identity.Root()
	if k, ok := hd.rev.get(ev.Parent); ev.HasParent && ok {
		parent = k
	}
	keys, err := AppendChain(nil, parent, ev.BlockSize, ev.Tokens)
	if err != nil {
		t.Fatal(err)
	}
	now, tick := ix.now(), ix.nextTick()
	for i, h := range ev.Hashes {
		ix.storeBlock(hd, h, keys[i], ev.Medium, now, tick, out)
	}
	hd.mu.Unlock()
	ix.report(*out)
}

// removeOneByOne applies a BlockRemoved as Remove did before batching:
// removeBlock per hash. It returns the unknown count.
func removeOneByOne(t *testing.T, ix *Index, ep string, hashes []uint64) int {
	t.Helper()
	hd, err := ix.holderFor(ep, 0, false)
	if err != nil || hd == nil {
		t.Fatalf("holder of %s: %v", ep, err)
	}
	unknown := 0
	hd.mu.Lock()
	for _, h := range hashes {
		if !ix.removeBlock(hd, h, MediumGPU) {
			unknown++
		}
	}
	hd.mu.Unlock()
	return unknown
}
