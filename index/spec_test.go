package index

import (
	"testing"
	"time"
)

type lifecycleCase struct {
	name    string
	grace   time.Duration
	run     func(t *testing.T, f *fixture)
	want    []Outcome
	wantHit Match // endpoint a's match for sequence 1 at the end
}

// lifecycleCases starts each case with decision 7 predicting 3 blocks of
// sequence 1 on endpoint a for ttl.
func lifecycleCases(ttl time.Duration) []lifecycleCase {
	return []lifecycleCase{
		{"confirmed before expiry", 0, func(t *testing.T, f *fixture) {
			f.clock.Advance(300 * time.Millisecond)
			f.store(t, "a", 0, 1, 0, 3, MediumGPU)
		}, []Outcome{{Kind: Confirmed, Endpoint: "a", Decision: 7, Blocks: 3, Latency: 300 * time.Millisecond}},
			Match{Confirmed: 3, Weighted: 3}},
		{"partly confirmed by a chunked store", 0, func(t *testing.T, f *fixture) {
			f.clock.Advance(100 * time.Millisecond)
			f.store(t, "a", 0, 1, 0, 2, MediumGPU)
		}, []Outcome{{Kind: Confirmed, Endpoint: "a", Decision: 7, Blocks: 2, Latency: 100 * time.Millisecond}},
			Match{Confirmed: 2, Speculative: 1, Weighted: 2}},
		{"expired without grace is stale", 0, func(t *testing.T, f *fixture) {
			f.clock.Advance(ttl)
			f.ix.Sweep()
		}, []Outcome{{Kind: StaleExpiry, Endpoint: "a", Decision: 7, Blocks: 3, Latency: ttl}}, Match{}},
		{"late confirmation within grace", time.Second, func(t *testing.T, f *fixture) {
			f.clock.Advance(ttl + 500*time.Millisecond)
			f.ix.Sweep() // not yet past grace: nothing ends
			f.store(t, "a", 0, 1, 0, 3, MediumGPU)
		}, []Outcome{{Kind: EarlyExpiry, Endpoint: "a", Decision: 7, Blocks: 3, Latency: ttl + 500*time.Millisecond}},
			Match{Confirmed: 3, Weighted: 3}},
		{"stale after grace", time.Second, func(t *testing.T, f *fixture) {
			f.clock.Advance(ttl + time.Second)
			f.ix.Sweep()
		}, []Outcome{{Kind: StaleExpiry, Endpoint: "a", Decision: 7, Blocks: 3, Latency: ttl + time.Second}}, Match{}},
		{"other endpoint's store does not confirm", 0, func(t *testing.T, f *fixture) {
			f.store(t, "b", 0, 1, 0, 3, MediumGPU)
		}, nil, Match{Speculative: 3}},
		{"endpoint clear drops predictions", 0, func(t *testing.T, f *fixture) {
			f.clock.Advance(time.Second)
			f.ix.ClearEndpoint("a")
		}, []Outcome{{Kind: Dropped, Endpoint: "a", Decision: 7, Blocks: 3, Latency: time.Second}}, Match{}},
	}
}

func TestSpeculativeLifecycle(t *testing.T) {
	const ttl = 2 * time.Second
	tests := lifecycleCases(ttl)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Options{Grace: tt.grace})
			if n, err := f.ix.Speculate("a", keysOf(t, 1, 3), 7, ttl); n != 3 || err != nil {
				t.Fatalf("Speculate: %d, %v", n, err)
			}
			tt.run(t, f)
			got := f.obs.take()
			if len(got) != len(tt.want) {
				t.Fatalf("outcomes %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("outcome %d: %+v, want %+v", i, got[i], tt.want[i])
				}
			}
			if m := f.lookup(t, 1, 3, "a")[0]; !matchEqual(m, tt.wantHit) {
				t.Errorf("match %+v, want %+v", m, tt.wantHit)
			}
		})
	}
}

func TestSpeculativeCoexistence(t *testing.T) {
	f := newFixture(t, Options{})
	f.store(t, "a", 0, 1, 0, 2, MediumGPU)
	// Only the block a does not hold is predicted.
	if n, _ := f.ix.Speculate("a", keysOf(t, 1, 3), 1, time.Second); n != 1 {
		t.Fatalf("created %d predictions, want 1", n)
	}
	if m := f.lookup(t, 1, 3, "a")[0]; m.Confirmed != 2 || m.Speculative != 1 {
		t.Fatalf("match %+v, want 2 confirmed + 1 speculative", m)
	}
	// A prediction stored before the confirmed copy coexists with it until
	// confirmed; a removal of the confirmed copy leaves it.
	f.ix.Speculate("b", keysOf(t, 1, 1), 2, time.Second)
	f.store(t, "b", 1, 1, 0, 1, MediumGPU)
	if got := f.obs.take(); len(got) != 1 || got[0].Kind != Confirmed || got[0].Endpoint != "b" {
		t.Fatalf("outcomes %+v, want one confirmation for b", got)
	}
	if st := f.ix.Stats(); st.Speculative != 1 {
		t.Errorf("%d live predictions, want 1", st.Speculative)
	}
}

func TestSpeculateExtendsLivePrediction(t *testing.T) {
	f := newFixture(t, Options{})
	f.ix.Speculate("a", keysOf(t, 1, 1), 1, time.Second)
	f.clock.Advance(800 * time.Millisecond)
	if n, _ := f.ix.Speculate("a", keysOf(t, 1, 1), 2, time.Second); n != 0 {
		t.Fatalf("a second prediction of a live one created %d entries", n)
	}
	f.clock.Advance(500 * time.Millisecond) // past the first expiry, within the second
	f.ix.Sweep()
	if m := f.lookup(t, 1, 1, "a")[0]; m.Speculative != 1 {
		t.Fatalf("extended prediction expired early: %+v", m)
	}
	f.store(t, "a", 0, 1, 0, 1, MediumGPU)
	got := f.obs.take()
	if len(got) != 1 || got[0].Decision != 1 || got[0].Latency != 1300*time.Millisecond {
		t.Errorf("outcomes %+v, want decision 1 confirmed after 1.3s", got)
	}
}

func TestExpiredPredictionDoesNotMatch(t *testing.T) {
	f := newFixture(t, Options{Grace: time.Minute})
	f.ix.Speculate("a", keysOf(t, 1, 2), 1, time.Second)
	f.clock.Advance(time.Second)
	if m := f.lookup(t, 1, 2, "a")[0]; m.Blocks() != 0 {
		t.Errorf("expired prediction matched: %+v", m)
	}
}

// TestWriteExpiryBounded lets many predictions fall due at once and checks
// that one write ends at most writeExpiries of a shard's, that the rest stay
// unmatchable, and that Sweep ends them all.
func TestWriteExpiryBounded(t *testing.T) {
	tests := []struct {
		name string
		n    int // predictions due together, all in one shard
	}{
		{"fewer than the bound", writeExpiries / 2},
		{"exactly the bound", writeExpiries},
		{"a burst", 5*writeExpiries + 3},
		{"beyond one sweep run", sweepExpiries + 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Options{Shards: 1})
			keys := keysOf(t, 1, tt.n)
			if n, err := f.ix.Speculate("a", keys, 7, time.Second); n != tt.n || err != nil {
				t.Fatalf("Speculate = %d, %v", n, err)
			}
			f.clock.Advance(2 * time.Second)
			f.ix.Speculate("b", keysOf(t, 2, 1), 8, time.Second) // a write to the shard
			ended := blocksOf(f.obs.take(), StaleExpiry)
			if want := min(tt.n, writeExpiries); ended != want {
				t.Fatalf("one write ended %d, want %d", ended, want)
			}
			if m := f.ix.Lookup(keys, []string{"a"}, nil); m[0] != (Match{}) {
				t.Fatalf("due predictions still match: %+v", m[0])
			}
			f.ix.Sweep()
			if ended += blocksOf(f.obs.take(), StaleExpiry); ended != tt.n {
				t.Fatalf("after Sweep %d ended, want %d", ended, tt.n)
			}
			if got := f.ix.Stats().Speculative; got != 1 {
				t.Fatalf("%d predictions left, want 1 (b's)", got)
			}
		})
	}
}

func blocksOf(os []Outcome, kind OutcomeKind) int {
	n := 0
	for _, o := range os {
		if o.Kind == kind {
			n += o.Blocks
		}
	}
	return n
}
