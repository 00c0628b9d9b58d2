package index

import (
	"slices"
	"testing"
	"time"
)

// TestSpeculateGroupedMatchesBatched inserts long predictions (grouped by
// shard) and the same ones eight keys at a time (speculateBatch) into two
// indexes holding the same blocks, and compares what each says per key:
// created counts, every key's match on each endpoint, and the outcomes of
// ending them all.
func TestSpeculateGroupedMatchesBatched(t *testing.T) {
	tests := []struct {
		name      string
		blocks    int
		confirmed int // leading blocks endpoint a holds confirmed
		earlier   int // leading blocks an earlier decision predicted on a
	}{
		{name: "shortest grouped", blocks: 8 * specGroupPerShard},
		{name: "long, none held", blocks: 3000},
		{name: "long, a confirmed prefix skipped", blocks: 1000, confirmed: 300},
		{name: "long, an earlier prediction kept", blocks: 1000, earlier: 500},
		{name: "both", blocks: 700, confirmed: 100, earlier: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const ttl = time.Second
			keys := keysOf(t, 1, tt.blocks)
			var got [2]int
			var ends [2][]Outcome
			var matches [2][][]Match
			for v := range 2 {
				f := newFixture(t, Options{Shards: 8})
				if tt.confirmed > 0 {
					f.store(t, "a", 0, 1, 0, tt.confirmed, MediumGPU)
				}
				if tt.earlier > 0 {
					f.ix.Speculate("a", keys[:tt.earlier], 1, ttl)
				}
				if !f.ix.groups(tt.blocks) {
					t.Fatalf("%d blocks over 8 shards are not grouped", tt.blocks)
				}
				if v == 0 {
					got[v], _ = f.ix.Speculate("a", keys, 2, ttl)
				} else {
					got[v] = specBatched(f.ix, "a", keys, 2, ttl)
				}
				for _, k := range keys {
					matches[v] = append(matches[v], f.ix.Lookup([]Key{k}, []string{"a", "b"}, nil))
				}
				f.obs.take()
				f.clock.Advance(2 * ttl)
				f.ix.Sweep()
				ends[v] = f.obs.take()
			}
			want := tt.blocks - max(tt.confirmed, tt.earlier)
			if got[0] != want || got[1] != want {
				t.Fatalf("created grouped %d, batched %d, want %d", got[0], got[1], want)
			}
			for i := range keys {
				if !slices.Equal(matches[0][i], matches[1][i]) {
					t.Fatalf("key %d: grouped %+v, batched %+v", i, matches[0][i], matches[1][i])
				}
			}
			if !slices.Equal(sortedOutcomes(ends[0]), sortedOutcomes(ends[1])) {
				t.Fatalf("outcomes grouped %+v, batched %+v", ends[0], ends[1])
			}
		})
	}
}

// specBatched is Speculate inserting eight keys per lock round, as short
// predictions are.
func specBatched(ix *Index, endpoint string, keys []Key, d DecisionID, ttl time.Duration) int {
	ep, _ := ix.eps.intern(endpoint)
	now := ix.now()
	out := getPending()
	defer putPending(out)
	sp := &speculation{ep: ep, d: d, at: now, expires: now + int64(ttl), now: now, out: out, expiries: writeExpiries + 2*len(keys)}
	created := 0
	for base := 0; base < len(keys); base += lookupBatch {
		created += ix.speculateBatch(keys[base:min(base+lookupBatch, len(keys))], sp)
	}
	ix.report(*out)
	return created
}

// sortedOutcomes merges outcomes per kind, endpoint and decision, whatever
// the order or grouping they were reported in.
func sortedOutcomes(os []Outcome) []Outcome {
	type k struct {
		kind OutcomeKind
		ep   string
		d    DecisionID
	}
	sum := map[k]Outcome{}
	for _, o := range os {
		key := k{o.Kind, o.Endpoint, o.Decision}
		s := sum[key]
		s.Kind, s.Endpoint, s.Decision, s.Latency = o.Kind, o.Endpoint, o.Decision, max(s.Latency, o.Latency)
		s.Blocks += o.Blocks
		sum[key] = s
	}
	var out []Outcome
	for _, o := range sum {
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b Outcome) int { return int(a.Decision) - int(b.Decision) + 10*(int(a.Kind)-int(b.Kind)) })
	return out
}
