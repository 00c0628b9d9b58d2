package index

import (
	"errors"
	"strconv"
	"testing"
	"time"
)

// remoteAt is another replica's prediction of the first n blocks of sequence
// seed on ep, decided at `at` for ttl.
func remoteAt(t *testing.T, ep string, seed, n int, d DecisionID, at time.Time, ttl time.Duration) Prediction {
	t.Helper()
	return Prediction{Endpoint: ep, Model: "m", Keys: keysOf(t, seed, n), Decision: d, DecidedAt: at, ExpiresAt: at.Add(ttl)}
}

func TestSpeculateRemote(t *testing.T) {
	const ttl = 2 * time.Second
	tests := []struct {
		name        string
		run         func(t *testing.T, f *fixture)
		want        []Outcome
		wantMatch   Match // endpoint a's match for 3 blocks of sequence 1 at the end
		wantRemote  [Dropped + 1]int64
		wantOutcome [Dropped + 1]int64
	}{
		{"matches until the decider's expiry", func(t *testing.T, f *fixture) {
			mustRemote(t, f, remoteAt(t, "a", 1, 3, 9, f.clock.Now().Add(-500*time.Millisecond), ttl), 3)
			f.clock.Advance(ttl - 500*time.Millisecond - time.Nanosecond)
			if m := f.lookup(t, 1, 3, "a")[0]; m.Speculative != 3 {
				t.Fatalf("one nanosecond before the decider's expiry: %+v, want 3 speculative", m)
			}
			f.clock.Advance(time.Nanosecond)
		}, nil, Match{}, [Dropped + 1]int64{}, [Dropped + 1]int64{}},
		{"confirmed remotely", func(t *testing.T, f *fixture) {
			mustRemote(t, f, remoteAt(t, "a", 1, 3, 9, f.clock.Now(), ttl), 3)
			f.clock.Advance(200 * time.Millisecond)
			f.store(t, "a", 0, 1, 0, 3, MediumGPU)
		}, []Outcome{{Kind: Confirmed, Endpoint: "a", Decision: 9, Blocks: 3, Latency: 200 * time.Millisecond, Remote: true}},
			Match{Confirmed: 3, Weighted: 3}, [Dropped + 1]int64{Confirmed: 3}, [Dropped + 1]int64{}},
		{"expires as remote stale", func(t *testing.T, f *fixture) {
			mustRemote(t, f, remoteAt(t, "a", 1, 3, 9, f.clock.Now(), ttl), 3)
			f.clock.Advance(ttl)
			f.ix.Sweep()
		}, []Outcome{{Kind: StaleExpiry, Endpoint: "a", Decision: 9, Blocks: 3, Latency: ttl, Remote: true}},
			Match{}, [Dropped + 1]int64{StaleExpiry: 3}, [Dropped + 1]int64{}},
		{"already expired is ignored", func(t *testing.T, f *fixture) {
			mustRemote(t, f, remoteAt(t, "a", 1, 3, 9, f.clock.Now().Add(-ttl), ttl), 0)
			f.ix.Sweep()
		}, nil, Match{}, [Dropped + 1]int64{}, [Dropped + 1]int64{}},
		{"decided in the future counts from now", func(t *testing.T, f *fixture) {
			p := remoteAt(t, "a", 1, 3, 9, f.clock.Now().Add(time.Second), ttl)
			mustRemote(t, f, p, 3)
			f.clock.Advance(100 * time.Millisecond)
			f.store(t, "a", 0, 1, 0, 3, MediumGPU)
		}, []Outcome{{Kind: Confirmed, Endpoint: "a", Decision: 9, Blocks: 3, Latency: 100 * time.Millisecond, Remote: true}},
			Match{Confirmed: 3, Weighted: 3}, [Dropped + 1]int64{Confirmed: 3}, [Dropped + 1]int64{}},
		{"a local prediction stays local", func(t *testing.T, f *fixture) {
			f.ix.Speculate("a", keysOf(t, 1, 3), 7, ttl)
			mustRemote(t, f, remoteAt(t, "a", 1, 3, 9, f.clock.Now(), 2*ttl), 0)
			f.clock.Advance(ttl) // the remote prediction extended the expiry
			f.store(t, "a", 0, 1, 0, 3, MediumGPU)
		}, []Outcome{{Kind: Confirmed, Endpoint: "a", Decision: 7, Blocks: 3, Latency: ttl}},
			Match{Confirmed: 3, Weighted: 3}, [Dropped + 1]int64{}, [Dropped + 1]int64{Confirmed: 3}},
		{"a remote prediction stays remote", func(t *testing.T, f *fixture) {
			mustRemote(t, f, remoteAt(t, "a", 1, 3, 9, f.clock.Now(), ttl), 3)
			if n, _ := f.ix.Speculate("a", keysOf(t, 1, 3), 7, ttl); n != 0 {
				t.Fatalf("local Speculate over remote entries created %d", n)
			}
			f.ix.ClearEndpoint("a")
		}, []Outcome{{Kind: Dropped, Endpoint: "a", Decision: 9, Blocks: 3, Remote: true}},
			Match{}, [Dropped + 1]int64{Dropped: 3}, [Dropped + 1]int64{}},
		{"confirmed keys are not predicted", func(t *testing.T, f *fixture) {
			f.store(t, "a", 0, 1, 0, 2, MediumGPU)
			mustRemote(t, f, remoteAt(t, "a", 1, 3, 9, f.clock.Now(), ttl), 1)
		}, nil, Match{Confirmed: 2, Speculative: 1, Weighted: 2}, [Dropped + 1]int64{}, [Dropped + 1]int64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Options{})
			tt.run(t, f)
			if got := f.obs.take(); !equalOutcomes(got, tt.want) {
				t.Errorf("outcomes = %+v, want %+v", got, tt.want)
			}
			if m := f.lookup(t, 1, 3, "a")[0]; m != tt.wantMatch {
				t.Errorf("match = %+v, want %+v", m, tt.wantMatch)
			}
			st := f.ix.Stats()
			if st.RemoteOutcomes != tt.wantRemote || st.Outcomes != tt.wantOutcome {
				t.Errorf("remote outcomes %v, local %v; want %v, %v", st.RemoteOutcomes, st.Outcomes, tt.wantRemote, tt.wantOutcome)
			}
		})
	}
}

func mustRemote(t *testing.T, f *fixture, p Prediction, want int) {
	t.Helper()
	n, err := f.ix.SpeculateRemote(p)
	if err != nil || n != want {
		t.Fatalf("SpeculateRemote = %d, %v; want %d", n, err, want)
	}
}

func equalOutcomes(a, b []Outcome) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSpeculateAtUsesGivenTimes(t *testing.T) {
	f := newFixture(t, Options{})
	at := f.clock.Now().Add(-time.Second)
	p := Prediction{Endpoint: "a", Keys: keysOf(t, 1, 2), Decision: 4, DecidedAt: at, ExpiresAt: at.Add(1500 * time.Millisecond)}
	if n, err := f.ix.SpeculateAt(p); n != 2 || err != nil {
		t.Fatalf("SpeculateAt = %d, %v", n, err)
	}
	f.clock.Advance(500 * time.Millisecond)
	if m := f.lookup(t, 1, 2, "a")[0]; m.Speculative != 0 {
		t.Errorf("match at the given expiry = %+v, want none", m)
	}
	f.ix.Sweep()
	want := []Outcome{{Kind: StaleExpiry, Endpoint: "a", Decision: 4, Blocks: 2, Latency: 1500 * time.Millisecond}}
	if got := f.obs.take(); !equalOutcomes(got, want) {
		t.Errorf("outcomes = %+v, want %+v", got, want)
	}
}

func TestSpeculateRemoteRejectsEmptyEndpoint(t *testing.T) {
	f := newFixture(t, Options{})
	now := f.clock.Now()
	_, err := f.ix.SpeculateRemote(Prediction{Keys: keysOf(t, 1, 1), DecidedAt: now, ExpiresAt: now.Add(time.Second)})
	if !errors.Is(err, ErrEndpoint) {
		t.Errorf("err = %v, want ErrEndpoint", err)
	}
	if _, err := f.ix.SpeculateAt(Prediction{Keys: keysOf(t, 1, 1)}); !errors.Is(err, ErrEndpoint) {
		t.Errorf("SpeculateAt err = %v, want ErrEndpoint", err)
	}
}

func BenchmarkSpeculateRemote(b *testing.B) {
	for _, n := range []int{16, 256, 4096} {
		b.Run(strconv.Itoa(n)+"keys", func(b *testing.B) {
			f := newFixture(b, Options{})
			keys := keysOf(b, 1, n)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				now := f.clock.Now()
				p := Prediction{Endpoint: "a", Keys: keys, Decision: DecisionID(i), DecidedAt: now, ExpiresAt: now.Add(time.Second)}
				if _, err := f.ix.SpeculateRemote(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
