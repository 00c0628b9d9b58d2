package affinity_test

import (
	"testing"
	"time"

	"github.com/warmroute/warmroute/affinity"
	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/internal/testclock"
	"github.com/warmroute/warmroute/scorer"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func newStore(maxAge time.Duration, maxEntries int) (*affinity.Store, *testclock.Manual) {
	clk := testclock.New(t0)
	s := affinity.New(affinity.Config{MaxAge: api.Duration(maxAge)},
		affinity.Options{Now: clk.Now, Limits: affinity.Limits{MaxEntries: maxEntries}})
	return s, clk
}

// TestLookup: each result as the scorer sees it, from a known live
// endpoint to an unknown id in a table that is, or is not yet, complete.
func TestLookup(t *testing.T) {
	live := []string{"a:1", "b:1"}
	for _, tt := range []struct {
		name     string
		setup    func(*affinity.Store, *testclock.Manual)
		pool, id string
		want     scorer.AffinityResult
		wantEP   string
	}{
		{"known and live", func(s *affinity.Store, _ *testclock.Manual) { s.Stored("p", "resp_1", "b:1") },
			"p", "resp_1", scorer.AffinityHit, "b:1"},
		{"known, endpoint not live", func(s *affinity.Store, _ *testclock.Manual) { s.Stored("p", "resp_1", "c:1") },
			"p", "resp_1", scorer.AffinityEndpointDown, ""},
		{"known in another pool only", func(s *affinity.Store, _ *testclock.Manual) { s.Stored("q", "resp_1", "a:1") },
			"p", "resp_1", scorer.AffinityUnsure, ""},
		{"unknown right after start", func(*affinity.Store, *testclock.Manual) {}, "p", "resp_x", scorer.AffinityUnsure, ""},
		{"unknown once complete", func(_ *affinity.Store, c *testclock.Manual) { c.Advance(time.Hour) },
			"p", "resp_x", scorer.AffinityUnknown, ""},
		{"expired by age", func(s *affinity.Store, c *testclock.Manual) { s.Stored("p", "resp_1", "a:1"); c.Advance(time.Hour) },
			"p", "resp_1", scorer.AffinityUnknown, ""},
		{"just inside the window", func(s *affinity.Store, c *testclock.Manual) {
			s.Stored("p", "resp_1", "a:1")
			c.Advance(time.Hour - time.Nanosecond)
		}, "p", "resp_1", scorer.AffinityHit, "a:1"},
		{"room eviction makes the table unsure", func(s *affinity.Store, c *testclock.Manual) {
			c.Advance(time.Hour)
			s.Stored("p", "resp_1", "a:1")
			s.Stored("p", "resp_2", "a:1")
			s.Stored("p", "resp_3", "a:1") // evicts resp_1 for room
		}, "p", "resp_1", scorer.AffinityUnsure, ""},
		{"room eviction forgotten after a window", func(s *affinity.Store, c *testclock.Manual) {
			c.Advance(time.Hour)
			for _, id := range []string{"resp_1", "resp_2", "resp_3"} {
				s.Stored("p", id, "a:1")
			}
			c.Advance(time.Hour)
		}, "p", "resp_1", scorer.AffinityUnknown, ""},
		{"first endpoint wins", func(s *affinity.Store, _ *testclock.Manual) {
			s.Stored("p", "resp_1", "a:1")
			s.Stored("p", "resp_1", "b:1")
		}, "p", "resp_1", scorer.AffinityHit, "a:1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, clk := newStore(time.Hour, 2)
			tt.setup(s, clk)
			ep, r := s.Lookup(tt.pool, tt.id, live)
			if r != tt.want || ep != tt.wantEP {
				t.Fatalf("Lookup = %q, %v; want %q, %v", ep, r, tt.wantEP, tt.want)
			}
		})
	}
}

// TestRemote: another replica's id is kept with its own time, so it ages
// out when it would have at the learning replica; one already too old, or
// known from the same or a later time, is ignored; a known id learnt later
// elsewhere takes its latest endpoint.
func TestRemote(t *testing.T) {
	s, clk := newStore(time.Hour, 10)
	if !s.Remote("p", "resp_1", "a:1", t0.Add(-30*time.Minute)) {
		t.Fatal("a fresh remote id was not recorded")
	}
	if s.Remote("p", "resp_1", "b:1", t0.Add(-40*time.Minute)) {
		t.Fatal("a known id from an earlier time replaced the later one")
	}
	if s.Remote("p", "resp_1", "a:1", t0.Add(-30*time.Minute)) {
		t.Fatal("a repeated message was recorded again")
	}
	if !s.Remote("p", "resp_3", "c:1", t0.Add(-40*time.Minute)) || !s.Remote("p", "resp_3", "d:1", t0.Add(-31*time.Minute)) {
		t.Fatal("a known id learnt later elsewhere was not replaced")
	}
	if ep, r := s.Lookup("p", "resp_3", []string{"c:1", "d:1"}); r != scorer.AffinityHit || ep != "d:1" {
		t.Fatalf("Lookup(resp_3) = %q, %v, want the latest endpoint d:1", ep, r)
	}
	if s.Remote("p", "resp_2", "a:1", t0.Add(-time.Hour)) {
		t.Fatal("an id as old as maxAge was recorded")
	}
	if ep, r := s.Lookup("p", "resp_1", []string{"a:1"}); r != scorer.AffinityHit || ep != "a:1" {
		t.Fatalf("Lookup = %q, %v", ep, r)
	}
	clk.Advance(30 * time.Minute)
	if _, r := s.Lookup("p", "resp_1", []string{"a:1"}); r == scorer.AffinityHit {
		t.Fatal("the remote id outlived its learning time plus maxAge")
	}
	if s.Len() != 0 {
		t.Fatalf("Len = %d after the age eviction, want 0", s.Len())
	}
}

// TestBoundedQueue: many ids through a small table keep it at its bound and
// the queue compacted.
func TestBoundedQueue(t *testing.T) {
	s, clk := newStore(time.Minute, 100)
	for i := range 10_000 {
		s.Stored("p", string(rune('a'+i%26))+time.Duration(i).String(), "a:1")
		if i%1000 == 0 {
			clk.Advance(time.Second)
		}
	}
	if n := s.Len(); n != 100 {
		t.Fatalf("Len = %d, want the bound 100", n)
	}
}

// TestEngineRestarted: ids the restarted endpoint stored before its restart
// are answered as not found (even while it is live and the table is not yet
// complete); other endpoints' ids and ids it stores afterwards still route.
func TestEngineRestarted(t *testing.T) {
	s, clk := newStore(time.Hour, 100)
	live := []string{"a:1", "b:1"}
	s.Stored("p", "old_a", "a:1")
	s.Stored("q", "old_a_q", "a:1")
	s.Stored("p", "old_b", "b:1")
	clk.Advance(time.Second)
	s.EngineRestarted("a:1")
	clk.Advance(time.Second)
	s.Stored("p", "new_a", "a:1")
	for _, tt := range []struct {
		pool, id string
		want     scorer.AffinityResult
	}{
		{"p", "old_a", scorer.AffinityUnknown},
		{"q", "old_a_q", scorer.AffinityUnknown},
		{"p", "old_b", scorer.AffinityHit},
		{"p", "new_a", scorer.AffinityHit},
	} {
		if _, got := s.Lookup(tt.pool, tt.id, live); got != tt.want {
			t.Errorf("%s/%s: %v, want %v", tt.pool, tt.id, got, tt.want)
		}
	}
	if s.Len() != 4 {
		t.Fatalf("%d ids kept, want 4 (gone ids age out as usual)", s.Len())
	}
	clk.Advance(time.Hour)
	s.Lookup("q", "old_a_q", live) // evictions are per pool, on use
	if _, got := s.Lookup("p", "old_a", live); got != scorer.AffinityUnknown || s.Len() != 0 {
		t.Fatalf("after a window: %v with %d ids, want unknown and none", got, s.Len())
	}
}
