package ttl

import (
	"cmp"
	"testing"
	"time"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/index"
)

func TestGuardPausesAndResumes(t *testing.T) {
	healthy := func(now time.Time) Freshness {
		return Freshness{SilenceLimit: testSilenceLimit, LastEvent: now.Add(-time.Second), Connected: true}
	}
	tests := []struct {
		name   string
		set    func(f *freshness, now time.Time)
		reason string
	}{
		{"healthy", func(f *freshness, now time.Time) { f.set("e", healthy(now)) }, ""},
		{"heartbeat keeps an idle endpoint fresh", func(f *freshness, now time.Time) {
			f.set("e", Freshness{SilenceLimit: testSilenceLimit, LastEvent: now.Add(-time.Hour), LastHeartbeat: now.Add(-time.Second), Connected: true})
		}, ""},
		{"stale", func(f *freshness, now time.Time) {
			f.set("e", Freshness{SilenceLimit: testSilenceLimit, LastEvent: now.Add(-6 * time.Second), LastHeartbeat: now.Add(-6 * time.Second), Connected: true})
		}, reasonStale},
		{"never heard", func(f *freshness, now time.Time) {
			f.set("e", Freshness{SilenceLimit: testSilenceLimit, Connected: true})
		}, reasonStale},
		{"disconnected", func(f *freshness, now time.Time) {
			v := healthy(now)
			v.Connected = false
			f.set("e", v)
		}, reasonDisconnected},
		{"silent beyond its own limit", func(f *freshness, now time.Time) {
			f.set("e", Freshness{SilenceLimit: time.Second, LastEvent: now.Add(-1500 * time.Millisecond),
				LastHeartbeat: now.Add(-1500 * time.Millisecond), Connected: true})
		}, reasonStale},
		{"silent within a longer limit", func(f *freshness, now time.Time) {
			f.set("e", Freshness{SilenceLimit: 10 * time.Second, LastEvent: now.Add(-6 * time.Second),
				LastHeartbeat: now.Add(-6 * time.Second), Connected: true})
		}, ""},
		{"no limit: silence alone never pauses", func(f *freshness, now time.Time) {
			f.set("e", Freshness{LastEvent: now.Add(-time.Hour), LastHeartbeat: now.Add(-time.Hour), Connected: true})
		}, ""},
		{"unknown endpoint", func(*freshness, time.Time) {}, reasonUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &freshness{}
			h := newHarness(t, Config{}, func(o *Options) { o.Freshness = src })
			tt.set(src, h.clk.Now())
			paused := tt.reason != ""
			if got := h.TTL("e", "m"); (got == 0) != paused {
				t.Fatalf("TTL %v, want paused=%v", got, paused)
			}
			if got := h.Trust("e", "m"); (got == 0) != paused {
				t.Fatalf("Trust %v, want paused=%v", got, paused)
			}
			if got := h.value(t, "warmroute_ttl_speculation_paused", map[string]string{"endpoint": "e"}); got != b2f(paused) {
				t.Fatalf("paused gauge %v, want %v", got, b2f(paused))
			}
			if p, reason := h.guard.status("e"); p != paused || reason != tt.reason {
				t.Fatalf("status %v %q, want %v %q", p, reason, paused, tt.reason)
			}
			// Recovery: once events flow again the endpoint resumes at
			// the next call, without waiting for the verdict's refresh.
			src.set("e", healthy(h.clk.Now()))
			if got := h.TTL("e", "m"); got != DefaultStatic {
				t.Fatalf("after recovery TTL %v, want %v", got, DefaultStatic)
			}
			if got := h.value(t, "warmroute_ttl_speculation_paused", map[string]string{"endpoint": "e"}); got != 0 {
				t.Fatalf("paused gauge %v after recovery", got)
			}
		})
	}
}

func TestGuardVerdictIsReusedWithinRefresh(t *testing.T) {
	src := &freshness{}
	h := newHarness(t, Config{}, func(o *Options) { o.Freshness = src })
	src.set("e", Freshness{SilenceLimit: testSilenceLimit, LastEvent: h.clk.Now(), Connected: true})
	if h.TTL("e", "m") == 0 {
		t.Fatal("healthy endpoint paused")
	}
	src.set("e", Freshness{SilenceLimit: testSilenceLimit, LastEvent: h.clk.Now()}) // disconnected
	h.clk.Advance(guardRefresh - time.Nanosecond)
	if h.TTL("e", "m") == 0 {
		t.Fatal("verdict re-judged before its refresh period")
	}
	h.clk.Advance(time.Nanosecond)
	if h.TTL("e", "m") != 0 {
		t.Fatal("disconnect not seen after the refresh period")
	}
}

// TestGuardPausedVerdictIsJudgedEveryCall: a paused endpoint resumes at the
// first call after its stream is fresh (a router just started hears its
// relays' first heartbeats after its first verdict, "unknown"), and
// re-judging it while it stays paused allocates nothing.
func TestGuardPausedVerdictIsJudgedEveryCall(t *testing.T) {
	src := &freshness{}
	h := newHarness(t, Config{}, func(o *Options) { o.Freshness = src })
	if h.Trust("e", "m") != 0 {
		t.Fatal("unknown endpoint trusted")
	}
	if p, reason := h.guard.status("e"); !p || reason != reasonUnknown {
		t.Fatalf("status %v %q, want paused %q", p, reason, reasonUnknown)
	}
	src.set("e", Freshness{SilenceLimit: testSilenceLimit, Connected: true}) // known, never heard
	if allocs := testing.AllocsPerRun(100, func() { h.TTL("e", "m") }); allocs != 0 {
		t.Errorf("re-judging a paused endpoint allocates %v times", allocs)
	}
	if p, reason := h.guard.status("e"); !p || reason != reasonStale {
		t.Fatalf("status %v %q, want paused %q", p, reason, reasonStale)
	}
	src.set("e", Freshness{SilenceLimit: testSilenceLimit, LastHeartbeat: h.clk.Now(), Connected: true})
	if got := h.Trust("e", "m"); got != 1 {
		t.Fatalf("trust %v at the first call after the heartbeat, want 1", got)
	}
	if p, reason := h.guard.status("e"); p || reason != "" {
		t.Fatalf("status %v %q after the heartbeat, want healthy", p, reason)
	}
}

// TestGuardRefreshMovesGauge: Run's step re-judges known endpoints even
// when no request asks.
func TestGuardRefreshMovesGauge(t *testing.T) {
	src := &freshness{}
	h := newHarness(t, Config{}, func(o *Options) { o.Freshness = src })
	src.set("e", Freshness{SilenceLimit: testSilenceLimit, LastEvent: h.clk.Now(), Connected: true})
	h.TTL("e", "m")
	h.clk.Advance(10 * time.Second) // no event since: stale
	h.step(h.clk.Now())
	if got := h.value(t, "warmroute_ttl_speculation_paused", map[string]string{"endpoint": "e"}); got != 1 {
		t.Fatalf("paused gauge %v, want 1", got)
	}
}

// TestGuardNeverLengthens: while paused an adaptive TTL is frozen, even when
// the latencies measured around the outage would advise a longer one.
func TestGuardNeverLengthens(t *testing.T) {
	src := &freshness{}
	h := newHarness(t, Config{Mode: ModeAdaptive, MinSamples: 10}, func(o *Options) { o.Freshness = src })
	src.set("e", Freshness{SilenceLimit: testSilenceLimit, LastEvent: h.clk.Now()}) // engine disconnected
	lat := make([]time.Duration, 10)
	for i := range lat {
		lat[i] = 4 * time.Second // confirmations replayed after the gap
	}
	h.feed(0, "e", "m", lat)
	for range 5 {
		h.step(h.clk.Now())
	}
	if got := time.Duration(h.series.get("e", "m").current.Load()); got != DefaultStatic {
		t.Fatalf("paused pair's TTL moved to %v", got)
	}
	if h.TTL("e", "m") != 0 {
		t.Fatal("paused endpoint got a TTL")
	}
}

func TestNoFreshnessSourceNeverPauses(t *testing.T) {
	h := newHarness(t, Config{})
	h.clk.Advance(time.Hour)
	if h.TTL("e", "m") != DefaultStatic || h.Trust("e", "m") != 1 {
		t.Fatal("paused without a freshness source")
	}
}

func TestTrustFallsForFailingEndpoint(t *testing.T) {
	h := newHarness(t, Config{MinSamples: 20}, func(o *Options) { o.Limits.Window = time.Minute })
	id := index.DecisionID(0)
	next := func() index.DecisionID { id++; return id }
	for i := range 19 { // below MinSamples: still 1
		h.confirm(next(), "bad", "m", 0, index.StaleExpiry)
		h.confirm(next(), "good", "m", 100*time.Millisecond, index.Confirmed)
		_ = i
	}
	if got := h.Trust("bad", "m"); got != 1 {
		t.Fatalf("trust %v before enough samples, want 1", got)
	}
	for range 21 {
		if id%4 == 0 {
			h.confirm(next(), "bad", "m", 2500*time.Millisecond, index.EarlyExpiry)
		} else {
			h.confirm(next(), "bad", "m", 0, index.StaleExpiry)
		}
		h.confirm(next(), "good", "m", 100*time.Millisecond, index.Confirmed)
	}
	bad := h.Trust("bad", "m")
	if bad <= 0 || bad > 0.3 {
		t.Fatalf("trust of failing endpoint %v, want a small positive share", bad)
	}
	if got := h.Trust("good", "m"); got != 1 {
		t.Fatalf("trust of healthy endpoint %v, want 1", got)
	}
	h.step(h.clk.Now())
	if got := h.value(t, "warmroute_ttl_trust", map[string]string{"endpoint": "bad", "model": "m"}); !near(got, bad) {
		t.Fatalf("trust gauge %v, want %v", got, bad)
	}
	// The window forgets: a minute later there are no samples, trust is 1.
	h.clk.Advance(time.Minute)
	if got := h.Trust("bad", "m"); got != 1 {
		t.Fatalf("trust %v after the window passed, want 1", got)
	}
}

// TestGuardSilentEndpoint covers a cut between engine and relay: heartbeats
// keep arriving, but routes that inserted predictions get no event back.
func TestGuardSilentEndpoint(t *testing.T) {
	tests := []struct {
		name      string
		eventLag  time.Duration // when the first event after the route arrives; 0 never
		limit     time.Duration // the source's silence limit; 0 testSilenceLimit
		cfg       Config
		wantPause bool
	}{
		{name: "event answers the route in time", eventLag: time.Second, wantPause: false},
		{name: "no event after the route", wantPause: true},
		{name: "event only after the limit", eventLag: 6 * time.Second, wantPause: true},
		{name: "event after the route, within a longer limit and TTL", eventLag: 6 * time.Second, limit: 10 * time.Second,
			cfg: Config{Static: api.Duration(8 * time.Second), MaxStale: api.Duration(10 * time.Second)}, wantPause: false},
		{name: "event after the TTL plus slack, within the source's limit", eventLag: 3500 * time.Millisecond, limit: 10 * time.Second,
			wantPause: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &freshness{}
			h := newHarness(t, tt.cfg, func(o *Options) { o.Freshness = src })
			start := h.clk.Now()
			lastEvent := start.Add(-time.Minute) // idle before: events are old, heartbeats fresh
			limit := cmp.Or(tt.limit, testSilenceLimit)
			beat := func() {
				src.set("e", Freshness{SilenceLimit: limit, LastEvent: lastEvent, LastHeartbeat: h.clk.Now(), Connected: true})
			}
			beat()
			if h.TTL("e", "m") == 0 {
				t.Fatal("idle endpoint with fresh heartbeats paused before any route")
			}
			h.Begin(1, Route{Endpoint: "e", Model: "m", PromptTokens: 64, NewSpeculative: 4, BlockSize: 16, At: start})
			for step := time.Duration(0); step <= 6*time.Second; step += 500 * time.Millisecond {
				h.clk.Set(start.Add(step))
				if tt.eventLag != 0 && step >= tt.eventLag {
					lastEvent = start.Add(tt.eventLag)
				}
				beat()
				if step == cmp.Or(tt.eventLag, 6*time.Second)-500*time.Millisecond {
					paused := h.TTL("e", "m") == 0
					if paused != tt.wantPause {
						_, reason := h.guard.status("e")
						t.Fatalf("paused=%v (%q) at %v, want %v", paused, reason, step, tt.wantPause)
					}
				}
			}
			if tt.wantPause && tt.eventLag != 0 {
				h.clk.Advance(guardRefresh)
				if h.TTL("e", "m") == 0 {
					t.Fatal("still paused after the endpoint published again")
				}
			}
		})
	}
}

// TestGuardSilentLimitFollowsTheLatency checks the silent rule's timing: a
// route unanswered by any event pauses its endpoint after the TTL in force
// plus silentSlack while there is no advice, and after the advised TTL plus
// slack (at least silentFloor) once there is, well before the source's
// silence limit.
func TestGuardSilentLimitFollowsTheLatency(t *testing.T) {
	tests := []struct {
		name       string
		cfg        Config
		confirmLag time.Duration // latency of the confirmations that form advice; 0 none
		few        bool          // too few of them for advice
		want       time.Duration
	}{
		{name: "static 2s, no advice", want: 2*time.Second + silentSlack},
		{name: "static 500ms, no advice", cfg: Config{Static: api.Duration(500 * time.Millisecond)}, want: silentFloor},
		{name: "advice from 1.2s confirmations", confirmLag: 1200 * time.Millisecond,
			want: 1300*time.Millisecond + silentSlack},
		{name: "advice from fast confirmations", confirmLag: 20 * time.Millisecond, want: silentFloor},
		{name: "no advice yet, confirmations slower than the TTL", confirmLag: 3 * time.Second, few: true,
			want: 3100*time.Millisecond + silentSlack},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &freshness{}
			tt.cfg.MinSamples = 5
			h := newHarness(t, tt.cfg, func(o *Options) { o.Freshness = src })
			beat := func(lastEvent time.Time) {
				src.set("e", Freshness{SilenceLimit: testSilenceLimit, LastEvent: lastEvent, LastHeartbeat: h.clk.Now(), Connected: true})
			}
			if tt.confirmLag > 0 {
				n := 10
				if tt.few {
					n = 3
				}
				for i := range n {
					id := index.DecisionID(100 + i)
					h.Begin(id, Route{Endpoint: "e", Model: "m", PromptTokens: 64, NewSpeculative: 1, BlockSize: 16, At: h.clk.Now()})
					h.clk.Advance(tt.confirmLag)
					h.Observe(index.Outcome{Kind: index.Confirmed, Endpoint: "e", Decision: id, Blocks: 1, Latency: tt.confirmLag})
				}
				beat(h.clk.Now())
				h.Step(h.clk.Now())
			}
			start := h.clk.Now()
			beat(start.Add(-time.Millisecond)) // the last event came just before the route
			h.Begin(1, Route{Endpoint: "e", Model: "m", PromptTokens: 64, NewSpeculative: 4, BlockSize: 16, At: start})
			pausedAt := time.Duration(-1)
			for step := 100 * time.Millisecond; step <= 6*time.Second; step += 100 * time.Millisecond {
				h.clk.Set(start.Add(step))
				beat(start.Add(-time.Millisecond))
				if h.TTL("e", "m") == 0 {
					pausedAt = step
					break
				}
			}
			if pausedAt < 0 {
				t.Fatal("never paused")
			}
			// Judged every guardRefresh; the test clock moves in 100ms steps.
			if pausedAt < tt.want || pausedAt > tt.want+guardRefresh+100*time.Millisecond {
				t.Errorf("paused after %v, want just after %v", pausedAt, tt.want)
			}
		})
	}
}

// TestGuardExportsListedEndpoints checks that endpoints named by
// Options.Endpoints get a speculation_paused series at the first round,
// before any request asked about them: never heard means paused.
func TestGuardExportsListedEndpoints(t *testing.T) {
	src := &freshness{}
	src.set("heard", Freshness{SilenceLimit: testSilenceLimit, LastHeartbeat: t0, Connected: true})
	h := newHarness(t, Config{}, func(o *Options) {
		o.Freshness = src
		o.Endpoints = func() []string { return []string{"heard", "never"} }
	})
	h.Step(h.clk.Now())
	for ep, want := range map[string]float64{"heard": 0, "never": 1} {
		if got := h.value(t, "warmroute_ttl_speculation_paused", map[string]string{"endpoint": ep}); got != want {
			t.Errorf("speculation_paused{endpoint=%q} = %v, want %v", ep, got, want)
		}
	}
}

// TestGuardSilentRuleKeepsALaterRoute checks that an event answering the
// oldest waiting route does not also answer a route committed after it:
// that route still waits, and pauses its endpoint when nothing follows.
func TestGuardSilentRuleKeepsALaterRoute(t *testing.T) {
	src := &freshness{}
	h := newHarness(t, Config{}, func(o *Options) { o.Freshness = src })
	start := h.clk.Now()
	beat := func(lastEvent time.Time) {
		src.set("e", Freshness{SilenceLimit: testSilenceLimit, LastEvent: lastEvent, LastHeartbeat: h.clk.Now(), Connected: true})
	}
	beat(start.Add(-time.Minute))
	if h.TTL("e", "m") == 0 {
		t.Fatal("paused before any route")
	}
	h.Begin(1, Route{Endpoint: "e", Model: "m", PromptTokens: 64, NewSpeculative: 4, BlockSize: 16, At: start})
	answered := start.Add(500 * time.Millisecond) // the first route's blocks arrive
	later := start.Add(time.Second)               // a second route, never answered
	h.clk.Set(later)
	h.Begin(2, Route{Endpoint: "e", Model: "m", PromptTokens: 64, NewSpeculative: 4, BlockSize: 16, At: later})
	for step := 200 * time.Millisecond; step <= 5*time.Second; step += 100 * time.Millisecond {
		h.clk.Set(later.Add(step))
		beat(answered)
		if h.TTL("e", "m") == 0 {
			if want := 2*time.Second + silentSlack; step < want {
				t.Fatalf("paused %v after the second route, before %v", step, want)
			}
			return
		}
	}
	t.Fatal("the unanswered second route never paused the endpoint")
}
