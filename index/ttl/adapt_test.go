package ttl

import (
	"testing"
	"time"
)

func TestAdaptStep(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name                string
		cur, target, lo, hi time.Duration
		want                time.Duration
	}{
		{"within band stays", 2000 * ms, 1950 * ms, 250 * ms, 5000 * ms, 2000 * ms},
		{"band edge stays", 2000 * ms, 1900 * ms, 250 * ms, 5000 * ms, 2000 * ms},
		{"down one step", 2000 * ms, 1500 * ms, 250 * ms, 5000 * ms, 1900 * ms},
		{"up one step", 1000 * ms, 3000 * ms, 250 * ms, 5000 * ms, 1100 * ms},
		{"small gap beyond band moves by the gap", 2000 * ms, 1850 * ms, 250 * ms, 5000 * ms, 1900 * ms},
		{"floor", 300 * ms, 0, 250 * ms, 5000 * ms, 250 * ms},
		{"ceiling", 4950 * ms, 9000 * ms, 250 * ms, 5000 * ms, 5000 * ms},
		{"out of bounds is pulled in even in band", 6000 * ms, 6000 * ms, 250 * ms, 5000 * ms, 5000 * ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := adaptStep(tt.cur, tt.target, 100*ms, 100*ms, tt.lo, tt.hi); got != tt.want {
				t.Fatalf("adaptStep = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestAdaptiveMovesSlowly: with the worked example's advice of 1.5 s the adaptive TTL
// walks down from 2 s one 100 ms step per round, then holds once the advice
// is within the 100 ms hysteresis band (a dead band: it does not chase the
// last 100 ms, so noise around the advice never moves it).
func TestAdaptiveMovesSlowly(t *testing.T) {
	h := newHarness(t, Config{Mode: ModeAdaptive}, func(o *Options) { o.Backlog = backlog(250 * time.Millisecond) })
	h.feed(0, "e", "m", referenceLatencies())
	want := []time.Duration{1900, 1800, 1700, 1600, 1600, 1600}
	for i, w := range want {
		h.step(h.clk.Now())
		if got := h.TTL("e", "m"); got != w*time.Millisecond {
			t.Fatalf("round %d: TTL %v, want %v", i, got, w*time.Millisecond)
		}
	}
	if got := h.value(t, "warmroute_ttl_current_seconds", map[string]string{"endpoint": "e", "model": "m"}); !near(got, 1.6) {
		t.Fatalf("current gauge %v, want 1.6", got)
	}
}

func TestAdaptiveHysteresis(t *testing.T) {
	// Advice 1.95 s is within the 100 ms jitter of 2 s, the dead band: no
	// move, ever.
	h := newHarness(t, Config{Mode: ModeAdaptive, MinSamples: 10, Jitter: dur(100 * time.Millisecond)})
	lat := make([]time.Duration, 10)
	for i := range lat {
		lat[i] = 1849 * time.Millisecond
	}
	h.feed(0, "e", "m", lat)
	for range 5 {
		h.step(h.clk.Now())
	}
	if adv := h.Report().Rows[0].Advice; adv.TTL.D() != 1950*time.Millisecond {
		t.Fatalf("advice %v, want 1.95s", adv.TTL.D())
	}
	if got := h.TTL("e", "m"); got != 2*time.Second {
		t.Fatalf("TTL moved to %v inside the hysteresis band", got)
	}
}

func TestAdaptiveWithoutSamplesStays(t *testing.T) {
	h := newHarness(t, Config{Mode: ModeAdaptive, Static: dur(1500 * time.Millisecond)})
	h.feed(0, "e", "m", referenceLatencies()[:99]) // one short of MinSamples
	for range 10 {
		h.step(h.clk.Now())
	}
	if got := h.TTL("e", "m"); got != 1500*time.Millisecond {
		t.Fatalf("TTL %v without enough samples, want the starting 1.5s", got)
	}
}

// TestAdaptiveFollowsOverall: a pair without samples of its own follows the
// pool-wide advice.
func TestAdaptiveFollowsOverall(t *testing.T) {
	h := newHarness(t, Config{Mode: ModeAdaptive, MinSamples: 50})
	lat := referenceLatencies()
	h.feed(0, "a", "m", lat[:50])
	h.feed(100, "b", "m", lat[50:]) // each pair alone: ready, different advice
	h.feed(200, "c", "m", lat[:10]) // not ready: follows overall
	h.step(h.clk.Now())
	if got := h.TTL("c", "m"); got != 1900*time.Millisecond {
		t.Fatalf("TTL of a sample-poor pair %v, want one step towards overall advice", got)
	}
	if got := h.TTL("a", "m"); got != 1900*time.Millisecond {
		t.Fatalf("TTL of a %v, want one step towards its own 0.29s advice", got)
	}
}

func TestAdviseModeKeepsStatic(t *testing.T) {
	h := newHarness(t, Config{Mode: ModeAdvise})
	h.feed(0, "e", "m", referenceLatencies())
	for range 5 {
		h.step(h.clk.Now())
	}
	if got := h.TTL("e", "m"); got != DefaultStatic {
		t.Fatalf("advise mode TTL %v, want static %v", got, DefaultStatic)
	}
	if got := h.value(t, "warmroute_ttl_advised_seconds", map[string]string{"endpoint": "e", "model": "m"}); !near(got, 1.25) {
		t.Fatalf("advised gauge %v, want p99 1.15 + 0.1 jitter = 1.25", got)
	}
}

// TestAdaptiveRaisesBeforeAdvice: below MinSamples, confirmations later
// than the TTL raise it in bounded steps towards the longest one seen (plus
// jitter); they never lower it, and too few of them do nothing.
func TestAdaptiveRaisesBeforeAdvice(t *testing.T) {
	slow := func(n int, d time.Duration) []time.Duration {
		out := make([]time.Duration, n)
		for i := range out {
			out[i] = d
		}
		return out
	}
	tests := []struct {
		name  string
		lat   []time.Duration
		steps int
		want  time.Duration
	}{
		{name: "late confirmations raise it a step per interval", lat: slow(20, 3*time.Second), steps: 3, want: 2300 * time.Millisecond},
		// Towards 3.1s (the longest plus jitter), stopping within the dead band.
		{name: "up to the longest plus jitter", lat: slow(20, 3*time.Second), steps: 30, want: 3 * time.Second},
		{name: "fast confirmations do not lower it", lat: slow(20, 200*time.Millisecond), steps: 10, want: 2 * time.Second},
		{name: "too few stay", lat: slow(9, 3*time.Second), steps: 10, want: 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, Config{Mode: ModeAdaptive}) // MinSamples 100: a raise needs 10
			h.feed(0, "e", "m", tt.lat)
			for range tt.steps {
				h.step(h.clk.Now())
			}
			if got := h.TTL("e", "m"); got != tt.want {
				t.Fatalf("TTL %v, want %v", got, tt.want)
			}
			if rep := h.Report(); rep.Overall.Advice.Ready {
				t.Fatal("advice ready: the case does not test the warm-up")
			}
		})
	}
}
