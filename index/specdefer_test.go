package index

import (
	"cmp"
	"fmt"
	"slices"
	"testing"
	"time"
)

// deferredKeys are decision i's n keys, none shared with another decision.
func deferredKeys(i, n int) []Key {
	out := make([]Key, n)
	for j := range out {
		out[j] = Key(mix(uint64(i)<<20|uint64(j)) | 1)
	}
	return out
}

// SpeculateDeferred followed by ExpireAfter leaves the index exactly as
// SpeculateAt does, outcome for outcome, while each shard's due predictions
// fit one write's expiry (writeExpiries): two indexes on one clock, one
// deciding inline and one deferred, over decisions whose predictions come
// due while later ones are made, at 8 and at 128 shards (past the bit set).
func TestSpeculateDeferredMatchesInline(t *testing.T) {
	for _, tc := range []struct{ shards, keys int }{{8, 24}, {64, 64}, {128, 64}} {
		t.Run(fmt.Sprintf("shards=%d/keys=%d", tc.shards, tc.keys), func(t *testing.T) {
			inline := newFixture(t, Options{Shards: tc.shards})
			deferred := newFixture(t, Options{Shards: tc.shards, Now: nil})
			deferred.clock = inline.clock
			deferred.ix.opts.Now = inline.clock.Now
			const ttl = 10 * time.Millisecond
			for i := range 200 {
				eps := fmt.Sprintf("10.0.0.%d:8000", i%3+1)
				now := inline.clock.Now()
				p := Prediction{Endpoint: eps, Keys: deferredKeys(i, tc.keys), Decision: DecisionID(i + 1),
					DecidedAt: now, ExpiresAt: now.Add(ttl)}
				a, err := inline.ix.SpeculateAt(p)
				if err != nil {
					t.Fatal(err)
				}
				b, err := deferred.ix.SpeculateDeferred(p)
				if err != nil {
					t.Fatal(err)
				}
				deferred.ix.ExpireAfter(p.Keys)
				if a != b {
					t.Fatalf("decision %d: %d entries created inline, %d deferred", i, a, b)
				}
				sa, sb := inline.ix.Stats(), deferred.ix.Stats()
				if sa.Speculative != sb.Speculative || sa.Outcomes != sb.Outcomes {
					t.Fatalf("decision %d: inline %d live, outcomes %v; deferred %d, %v",
						i, sa.Speculative, sa.Outcomes, sb.Speculative, sb.Outcomes)
				}
				// The same outcomes; the shards are visited in another
				// order, which orders the reports.
				oa, ob := sortOutcomes(inline.obs.take()), sortOutcomes(deferred.obs.take())
				if !slices.Equal(oa, ob) {
					t.Fatalf("decision %d: outcomes %v inline, %v deferred", i, oa, ob)
				}
				inline.clock.Advance(time.Millisecond / 2)
			}
			if inline.ix.Stats().Outcomes[StaleExpiry] == 0 {
				t.Fatal("no prediction expired: the test exercised no expiry")
			}
		})
	}
}

func sortOutcomes(o []Outcome) []Outcome {
	slices.SortFunc(o, func(a, b Outcome) int {
		return cmp.Or(cmp.Compare(a.Decision, b.Decision), cmp.Compare(a.Endpoint, b.Endpoint),
			cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Blocks, b.Blocks))
	})
	return o
}

// SpeculateDeferred expires nothing; ExpireAfter then ends what was due in
// the keys' shards.
func TestExpireAfterExpires(t *testing.T) {
	f := newFixture(t, Options{Shards: 4})
	now := f.clock.Now()
	old := Prediction{Endpoint: "a:1", Keys: deferredKeys(1, 32), Decision: 1, DecidedAt: now, ExpiresAt: now.Add(time.Millisecond)}
	if _, err := f.ix.SpeculateAt(old); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Second)
	now = f.clock.Now()
	p := Prediction{Endpoint: "a:1", Keys: deferredKeys(2, 32), Decision: 2, DecidedAt: now, ExpiresAt: now.Add(time.Second)}
	if _, err := f.ix.SpeculateDeferred(p); err != nil {
		t.Fatal(err)
	}
	if st := f.ix.Stats(); st.Speculative != 64 || st.Outcomes[StaleExpiry] != 0 {
		t.Fatalf("after the deferred insert: %d live, %d stale; want 64 and 0", st.Speculative, st.Outcomes[StaleExpiry])
	}
	f.ix.ExpireAfter(p.Keys)
	if st := f.ix.Stats(); st.Speculative != 32 || st.Outcomes[StaleExpiry] != 32 {
		t.Fatalf("after ExpireAfter: %d live, %d stale; want 32 and 32", st.Speculative, st.Outcomes[StaleExpiry])
	}
}

// A routed prompt's continuation is predicted whole by SpeculateDeferred,
// even a block its endpoint still holds past a gap (the engine recomputes
// from its first missing block, and vLLM announces the recomputed copy
// again), where SpeculateAt skips what the endpoint holds confirmed; the
// engine's store then confirms every one of them. Only the prediction an
// endpoint-held key gets differs: lookups of the chain are the same. The
// long chain's continuation is inserted grouped by shard (groups).
func TestSpeculateDeferredPredictsWholeContinuation(t *testing.T) {
	const ep = "a:1"
	for _, tc := range []struct{ n, gapFrom, gap int }{{8, 4, 2}, {200, 100, 10}} {
		for _, deferred := range []bool{false, true} {
			t.Run(fmt.Sprintf("blocks=%d/deferred=%v", tc.n, deferred), func(t *testing.T) {
				f := newFixture(t, Options{Shards: 4})
				if rest := tc.n - tc.gapFrom; f.ix.groups(rest) != (tc.n > 8) {
					t.Fatalf("a continuation of %d keys grouped: %v, want %v", rest, f.ix.groups(rest), tc.n > 8)
				}
				f.store(t, ep, 0, 1, 0, tc.n, MediumGPU)
				// The engine evicted the gap's blocks and kept those after it.
				if u, err := f.ix.Remove(ep, 0, hashes(1, tc.gapFrom, tc.gap), MediumGPU); err != nil || u != 0 {
					t.Fatalf("Remove: %d unknown, %v", u, err)
				}
				m := f.lookup(t, 1, tc.n, ep)[0]
				if m.Confirmed != tc.gapFrom || m.Speculative != 0 {
					t.Fatalf("before the prediction: %+v, want %d confirmed", m, tc.gapFrom)
				}
				now := f.clock.Now()
				p := Prediction{Endpoint: ep, Keys: keysOf(t, 1, tc.n)[m.Confirmed:], Decision: 7,
					DecidedAt: now, ExpiresAt: now.Add(time.Second)}
				want := tc.gap
				var created int
				var err error
				if deferred {
					want = tc.n - tc.gapFrom
					created, err = f.ix.SpeculateDeferred(p)
					f.ix.ExpireAfter(p.Keys)
				} else {
					created, err = f.ix.SpeculateAt(p)
				}
				if err != nil || created != want {
					t.Fatalf("created %d entries (%v), want %d", created, err, want)
				}
				if got := f.lookup(t, 1, tc.n, ep)[0]; got.Confirmed != tc.n-tc.gap || got.Speculative != tc.gap {
					t.Fatalf("after the prediction: %+v, want %d confirmed and the gap's %d speculative",
						got, tc.n-tc.gap, tc.gap)
				}
				// The engine prefills from the gap on again and stores it all.
				f.store(t, ep, 0, 1, tc.gapFrom, tc.n-tc.gapFrom, MediumGPU)
				st := f.ix.Stats()
				if st.Outcomes[Confirmed] != int64(want) || st.Speculative != 0 {
					t.Fatalf("after the store: %d confirmed, %d still predicted; want %d and 0",
						st.Outcomes[Confirmed], st.Speculative, want)
				}
				if got := f.lookup(t, 1, tc.n, ep)[0]; got.Confirmed != tc.n || got.Speculative != 0 {
					t.Fatalf("after the store: %+v, want all %d confirmed", got, tc.n)
				}
			})
		}
	}
}
