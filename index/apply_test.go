package index

import (
	"maps"
	"slices"
	"testing"
	"time"
)

// applyEps are the endpoints the Apply tests' messages come from.
var applyEps = []string{"10.0.0.1:8000", "10.0.0.2:8000"}

// applyMsg is one engine message for an Apply test, or, with predict set, a
// prediction of the first predict blocks of sequence seed for ep.
type applyMsg struct {
	ep, rank int
	changes  []Change
	predict  int
	seed     int
}

// storeChange is blocks [from, from+n) of sequence seed, hashed as the
// fixture's engine does, chained to the block before.
func storeChange(seed, from, n int, m Medium) Change {
	ev := Stored{Hashes: hashes(seed, from, n), Tokens: tokens(seed, from, n), BlockSize: testBS,
		Identity: testID, Medium: m}
	if from > 0 {
		ev.Parent, ev.HasParent = engineHash(seed, from-1), true
	}
	return Change{Stored: ev}
}

func removeChange(m Medium, hs ...uint64) Change {
	return Change{Removed: true, Stored: Stored{Hashes: hs, Medium: m}}
}

// TestApplyMatchesOneByOne applies messages once through Apply and once
// block by block (storeBlock and removeBlock, as Store and Remove did
// before batching) and wants the same index: see compareApplied.
func TestApplyMatchesOneByOne(t *testing.T) {
	h := func(seed, b int) uint64 { return engineHash(seed, b) }
	seq := func(seed, from, n int) []uint64 { return hashes(seed, from, n) }
	cases := []struct {
		name string
		msgs []applyMsg
	}{
		{"store then remove, as vLLM's steady state", []applyMsg{
			{changes: []Change{storeChange(1, 0, 16, MediumGPU)}},
			{changes: []Change{storeChange(2, 0, 16, MediumGPU), removeChange(MediumGPU, seq(1, 0, 16)...)}},
			{changes: []Change{storeChange(1, 0, 16, MediumGPU), removeChange(MediumGPU, seq(2, 0, 16)...)}},
		}},
		{"remove before store", []applyMsg{
			{changes: []Change{storeChange(1, 0, 8, MediumGPU)}},
			{changes: []Change{removeChange(MediumGPU, seq(1, 4, 4)...), storeChange(1, 4, 8, MediumGPU)}},
		}},
		{"a store's parent removed earlier in the message", []applyMsg{
			{changes: []Change{storeChange(1, 0, 4, MediumGPU)}},
			{changes: []Change{removeChange(MediumGPU, h(1, 3)), storeChange(1, 4, 4, MediumGPU)}},
		}},
		{"a hash removed, then stored again in the message", []applyMsg{
			{changes: []Change{storeChange(1, 0, 4, MediumGPU)}},
			{changes: []Change{removeChange(MediumGPU, seq(1, 0, 4)...), storeChange(1, 0, 4, MediumGPU), removeChange(MediumGPU, h(1, 2))}},
		}},
		{"stored and removed in one message", []applyMsg{
			{changes: []Change{storeChange(1, 0, 1, MediumGPU)}},
			{changes: []Change{storeChange(1, 0, 20, MediumGPU), removeChange(MediumGPU, seq(1, 0, 20)...)}},
		}},
		{"more blocks than a plan", []applyMsg{
			{changes: []Change{storeChange(3, 0, 1, MediumCPU)}},
			{changes: []Change{storeChange(1, 0, 40, MediumGPU), storeChange(2, 0, 40, MediumGPU), removeChange(MediumGPU, seq(1, 10, 30)...)}},
		}},
		{"two media, re-announced", []applyMsg{
			{changes: []Change{storeChange(1, 0, 6, MediumGPU)}},
			{changes: []Change{storeChange(1, 0, 6, MediumCPU), storeChange(1, 0, 6, MediumGPU), removeChange(MediumGPU, seq(1, 0, 3)...), removeChange(MediumCPU, seq(1, 2, 4)...)}},
		}},
		{"repeated hashes, inside and across events", []applyMsg{
			{changes: []Change{storeChange(1, 0, 6, MediumGPU)}},
			{changes: []Change{removeChange(MediumGPU, h(1, 2), h(1, 2), h(1, 5)), removeChange(MediumGPU, h(1, 4), h(1, 2)), removeChange(MediumGPU, h(1, 0))}},
		}},
		{"a hash removed twice around a store of its block under another hash", []applyMsg{
			{changes: []Change{storeChange(1, 0, 4, MediumGPU)}},
			{changes: []Change{removeChange(MediumGPU, h(1, 2)), {Stored: Stored{Hashes: seq(5, 0, 4), Tokens: tokens(1, 0, 4),
				BlockSize: testBS, Identity: testID, Medium: MediumGPU}}, removeChange(MediumGPU, h(1, 2), h(1, 3))}},
		}},
		{"a hash rebound to other blocks", []applyMsg{
			{changes: []Change{storeChange(1, 0, 4, MediumGPU)}},
			{changes: []Change{storeChange(2, 0, 3, MediumGPU), {Stored: Stored{Hashes: seq(1, 0, 4), Tokens: tokens(2, 4, 4),
				BlockSize: testBS, Identity: testID, Medium: MediumGPU}}, removeChange(MediumGPU, seq(1, 1, 2)...)}},
		}},
		{"predicted, then stored and removed", []applyMsg{
			{changes: []Change{storeChange(3, 0, 1, MediumGPU)}},
			{predict: 12, seed: 1},
			{changes: []Change{storeChange(1, 0, 12, MediumGPU), removeChange(MediumGPU, seq(1, 0, 5)...)}},
		}},
		{"errors and token-less stores in a message", []applyMsg{
			{changes: []Change{storeChange(1, 0, 4, MediumGPU)}},
			{changes: []Change{
				{Stored: Stored{Hashes: seq(1, 0, 4), Medium: MediumCPU}},
				{Stored: Stored{Hashes: seq(2, 0, 2), Tokens: tokens(2, 0, 2), BlockSize: testBS + 1, Identity: testID}},
				storeChange(2, 0, 3, MediumGPU),
				removeChange(MediumCPU, seq(1, 0, 2)...),
				{Stored: Stored{Hashes: seq(2, 3, 3), Tokens: tokens(2, 3, 2), BlockSize: testBS, Identity: testID,
					Parent: h(2, 2), HasParent: true, Medium: MediumGPU}},
			}},
		}},
		{"a holder's first message", []applyMsg{
			{rank: 1, changes: []Change{removeChange(MediumGPU, h(1, 0)), storeChange(1, 0, 5, MediumGPU), removeChange(MediumGPU, h(1, 1))}},
			{ep: 1, changes: []Change{storeChange(1, 0, 5, MediumGPU)}},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, shards := range []int{4, 128} {
				compareApplied(t, shards, tc.msgs)
			}
		})
	}
}

// FuzzApply is TestApplyMatchesOneByOne over arbitrary messages (see
// fuzzMessages): hashes from a small space, so that they repeat, rebind
// and name parents removed earlier in the same message.
func FuzzApply(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 1, 0, 16, 0, 0, 1, 1, 0, 16, 0})
	f.Add([]byte{3, 2, 0, 1, 4, 9, 17, 1, 0, 3, 2, 6, 2, 2, 18, 0, 1, 5})
	f.Add([]byte{0, 4, 0, 2, 20, 0, 1, 2, 7, 1, 2, 1, 12, 1, 4, 1, 2, 3, 5, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 600 {
			data = data[:600]
		}
		compareApplied(t, 4, fuzzMessages(data))
	})
}

// fuzzMessages turns bytes into messages: per message a header byte (its
// holder and how many changes), then per change a kind byte and three
// parameter bytes.
func fuzzMessages(data []byte) []applyMsg {
	next := func() int {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return int(b)
	}
	var msgs []applyMsg
	for len(data) > 0 {
		hdr := next()
		m := applyMsg{ep: hdr & 1, rank: hdr >> 1 & 1}
		if hdr>>2&7 == 7 {
			m.predict, m.seed = 1+next()%24, next()%3
			msgs = append(msgs, m)
			continue
		}
		for range 1 + hdr>>2&3 {
			kind, a, b, c := next(), next(), next(), next()
			seed, from, n := a%3, b%12, c%24
			med := Medium(kind >> 4 & 1)
			var ch Change
			switch kind & 7 {
			case 0, 1, 2: // a chain's blocks, as the engine hashes them
				ch = storeChange(seed, from, n, med)
			case 3: // hashes from a space of six, rebinding and repeating
				ch = storeChange(seed, from, n, med)
				for i := range ch.Hashes {
					ch.Hashes[i] = engineHash(kind>>5&1, (from+i)%6)
				}
			case 4: // a store whose parent is any hash of the space
				ch = storeChange(seed, from, n, med)
				ch.Parent, ch.HasParent = engineHash(kind>>5&1, a%6), true
			case 5: // token-less (known blocks), or a wrong block size
				ch = storeChange(seed, from, n, med)
				if kind&8 != 0 {
					ch.Tokens, ch.BlockSize = nil, 0
				} else {
					ch.BlockSize = testBS + 1
				}
			default: // a removal, possibly with repeats
				hs := hashes(seed, from, n)
				if kind&8 != 0 {
					for i := range hs {
						hs[i] = engineHash(seed, (from+i)%6)
					}
				}
				ch = removeChange(med, hs...)
			}
			m.changes = append(m.changes, ch)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// compareApplied applies msgs to two indexes, through Apply and block by
// block, and wants the same results per change, the same lookups of every
// chain prefix and every stored key on every endpoint, the same reverse
// tables and the same counters.
func compareApplied(t *testing.T, shards int, msgs []applyMsg) {
	t.Helper()
	whole, split := newFixture(t, Options{Shards: shards}), newFixture(t, Options{Shards: shards})
	var stored [][]Key
	for mi, m := range msgs {
		ep := applyEps[m.ep]
		if m.predict > 0 {
			for _, f := range []*fixture{whole, split} {
				if _, err := f.ix.Speculate(ep, keysOf(t, m.seed, m.predict), DecisionID(mi+1), time.Hour); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		got := make([]ChangeResult, len(m.changes))
		whole.ix.Apply(ep, m.rank, m.changes, got)
		want, keys := applyOneByOne(t, split.ix, ep, m.rank, m.changes)
		stored = append(stored, keys...)
		for i := range got {
			g, w := got[i], want[i]
			if g.Stored != w.Stored || g.Unknown != w.Unknown || (g.Err == nil) != (w.Err == nil) ||
				(g.Err != nil && g.Err.Error() != w.Err.Error()) {
				t.Fatalf("message %d change %d: Apply = %+v, block by block %+v", mi, i, g, w)
			}
		}
	}
	for seed := range 3 {
		stored = append(stored, keysOf(t, seed, 40))
	}
	for _, keys := range stored {
		for n := 1; n <= len(keys); n++ {
			got, want := whole.ix.Lookup(keys[:n], applyEps, nil), split.ix.Lookup(keys[:n], applyEps, nil)
			if !slices.Equal(got, want) {
				t.Fatalf("Lookup of %d blocks = %+v, block by block %+v", n, got, want)
			}
			one := keys[n-1 : n]
			got, want = whole.ix.Lookup(one, applyEps, nil), split.ix.Lookup(one, applyEps, nil)
			if !slices.Equal(got, want) {
				t.Fatalf("Lookup of block %d alone = %+v, block by block %+v", n-1, got, want)
			}
		}
	}
	for _, ep := range applyEps {
		for rank := range 2 {
			if g, w := revOf(t, whole.ix, ep, rank), revOf(t, split.ix, ep, rank); !maps.Equal(g, w) {
				t.Fatalf("%s rank %d: reverse table %v, block by block %v", ep, rank, g, w)
			}
		}
	}
	gs, ws := whole.ix.Stats(), split.ix.Stats()
	gs.Bytes, ws.Bytes = 0, 0 // table sizes may differ by when they grew
	if gs != ws {
		t.Fatalf("stats = %+v\nblock by block %+v", gs, ws)
	}
}

// revOf returns a holder's reverse table as a map.
func revOf(t *testing.T, ix *Index, ep string, rank int) map[uint64]Key {
	hd, err := ix.holderFor(ep, rank, false)
	if err != nil {
		t.Fatal(err)
	}
	out := map[uint64]Key{}
	if hd == nil {
		return out
	}
	hd.mu.Lock()
	defer hd.mu.Unlock()
	hd.rev.all(func(h uint64, k Key) { out[h] = k })
	return out
}

// applyOneByOne applies changes as Store and Remove did before batching,
// block by block through storeBlock and removeBlock, and returns each
// change's result and the keys of every store.
func applyOneByOne(t *testing.T, ix *Index, ep string, rank int, changes []Change) ([]ChangeResult, [][]Key) {
	t.Helper()
	out := make([]ChangeResult, len(changes))
	var stored [][]Key
	for i, ch := range changes {
		ev := ch.Stored
		ev.Endpoint, ev.Rank = ep, rank
		var hd *holder
		switch {
		case ch.Removed:
			hd, _ = ix.holderFor(ep, rank, false)
		case ev.BlockSize == ix.opts.BlockSize:
			hd, _ = ix.holderFor(ep, rank, true)
		}
		switch {
		case ch.Removed && hd != nil:
			hd.mu.Lock()
			for _, h := range ch.Hashes {
				if !ix.removeBlock(hd, h, ch.Medium) {
					out[i].Unknown++
				}
			}
			hd.mu.Unlock()
			ix.stats.removedBlocks.Add(int64(len(ch.Hashes) - out[i].Unknown))
			ix.stats.unknownRemoved.Add(int64(out[i].Unknown))
		case ch.Removed:
			out[i].Unknown, out[i].Err = ix.Remove(ep, rank, ch.Hashes, ch.Medium)
		case len(ev.Tokens) == 0 && ev.BlockSize == 0, ev.BlockSize != ix.opts.BlockSize:
			out[i].Stored, out[i].Err = ix.Store(ev) // block by block already, or rejected
		default:
			var keys []Key
			out[i].Stored, keys, out[i].Err = storeOneByOneResult(ix, hd, ev)
			stored = append(stored, keys)
		}
	}
	return out, stored
}

// storeOneByOneResult is storeOneByOne with Store's result and counters.
func storeOneByOneResult(ix *Index, hd *holder, ev Stored) (StoreResult, []Key, error) {
	out := getPending()
	defer putPending(out)
	var res StoreResult
	hd.mu.Lock()
	parent := ev.Identity.Root()
	if ev.HasParent {
		if k, ok := hd.rev.get(ev.Parent); ok {
			parent = k
		} else {
			res.UnknownParent = true
			ix.stats.unknownParent.Add(1)
		}
	}
	keys, err := AppendChainExtra(nil, parent, ev.BlockSize, ev.Tokens, ev.Extra)
	if err != nil {
		hd.mu.Unlock()
		return res, nil, err
	}
	n := min(len(keys), len(ev.Hashes))
	res.Skipped, res.Blocks = len(ev.Hashes)-n, n
	if len(keys) != len(ev.Hashes) {
		ix.stats.lengthMismatch.Add(1)
	}
	now, tick := ix.now(), ix.nextTick()
	for i := range n {
		ix.storeBlock(hd, ev.Hashes[i], keys[i], ev.Medium, now, tick, out)
	}
	ix.stats.storedBlocks.Add(int64(n))
	hd.mu.Unlock()
	ix.report(*out)
	return res, keys, nil
}
