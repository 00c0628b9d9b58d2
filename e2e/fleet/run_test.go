package fleet

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

func regime(t *testing.T, name string, scale float64) Regime {
	t.Helper()
	regs, err := FindRegimes([]string{name})
	if err != nil {
		t.Fatal(err)
	}
	return regs[0].Scaled(scale)
}

func mustRun(t *testing.T, reg Regime, policy string, seed uint64) Result {
	t.Helper()
	r, err := Run(reg, policy, seed, DefaultTuning)
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests == 0 || r.PromptTokens == 0 {
		t.Fatalf("%s/%s served nothing: %+v", reg.Name, policy, r)
	}
	return r
}

// TestRegimePremises checks each regime creates the condition it is named
// for, on small seeded runs.
func TestRegimePremises(t *testing.T) {
	t.Run("long-prefill: confirmations take longer than a static 2s", func(t *testing.T) {
		r := mustRun(t, regime(t, "long-prefill", 0.5), policyAdvise, 1)
		if r.Advised <= 3*time.Second {
			t.Errorf("advice %v, want above 3s (route-to-confirmation p99 of 3-4s and more)", r.Advised)
		}
	})
	t.Run("silent: failed requests leave stale predictions", func(t *testing.T) {
		r := mustRun(t, regime(t, "silent", 0.5), PolicyStatic2, 1)
		if r.StaleBlocks == 0 {
			t.Error("no stale expiry")
		}
		all := regime(t, "fast", 0.1)
		all.SilentFailRate = 1
		r = mustRun(t, all, PolicyStatic2, 1)
		if r.CachedTokens != 0 || r.SpeculativeRoutes == 0 || r.FalseWarm != r.SpeculativeRoutes {
			t.Errorf("every request silent: cached %d, %d speculative routes, %d false warm; want 0 and all false",
				r.CachedTokens, r.SpeculativeRoutes, r.FalseWarm)
		}
	})
	t.Run("mixed: endpoints advise different TTLs", func(t *testing.T) {
		reg := regime(t, "mixed", 1)
		tune := DefaultTuning
		tune.MinSamples = 10
		r, err := Run(reg, PolicyAdaptive, 1, tune)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(r.TTL, "/") {
			t.Errorf("adaptive TTLs at the end %q, want per-endpoint values that differ", r.TTL)
		}
	})
	t.Run("burst: simultaneous first requests route on one prediction", func(t *testing.T) {
		r := mustRun(t, regime(t, "burst", 0.25), PolicyStatic2, 1)
		if r.FalseWarmShare() < 0.2 {
			t.Errorf("false warm share %.2f, want the burst's followers routed on the first's prediction before it computed", r.FalseWarmShare())
		}
	})
	t.Run("cut: the guard pauses every endpoint", func(t *testing.T) {
		r := mustRun(t, regime(t, "cut", 0.25), PolicyStatic2, 1)
		if r.TTL != "paused" {
			t.Errorf("TTL at the end %q, want paused", r.TTL)
		}
	})
	t.Run("relays-down: no speculation at all", func(t *testing.T) {
		r := mustRun(t, regime(t, "relays-down", 0.25), PolicyStatic2, 1)
		if r.SpeculativeRoutes != 0 || r.StaleBlocks != 0 {
			t.Errorf("%d speculative routes, %d stale blocks; want 0", r.SpeculativeRoutes, r.StaleBlocks)
		}
	})
	t.Run("fast: the oracle and prefix routing beat load", func(t *testing.T) {
		reg := regime(t, "fast", 0.25)
		load, prefix, oracle := mustRun(t, reg, PolicyLoad, 1), mustRun(t, reg, PolicyStatic2, 1), mustRun(t, reg, PolicyOracle, 1)
		if prefix.HitRate() < load.HitRate()+0.05 || oracle.HitRate() < load.HitRate()+0.05 {
			t.Errorf("hit rates load %.3f, static-2s %.3f, oracle %.3f", load.HitRate(), prefix.HitRate(), oracle.HitRate())
		}
		if oracle.FalseWarm != 0 || load.SpeculativeRoutes != 0 {
			t.Error("the oracle or load-only routing counted speculative routes")
		}
	})
}

// TestSameWorkloadForEveryPolicy checks that a cell's policies see the same
// requests: prompt tokens depend on the seed alone.
func TestSameWorkloadForEveryPolicy(t *testing.T) {
	reg := regime(t, "silent", 0.25)
	var want int64
	for i, p := range Policies {
		r := mustRun(t, reg, p, 2)
		if i == 0 {
			want = r.PromptTokens
		}
		if r.PromptTokens != want {
			t.Errorf("%s: %d prompt tokens, want %d", p, r.PromptTokens, want)
		}
	}
}

// TestMatrix runs a tiny matrix and checks the table and the goals.
func TestMatrix(t *testing.T) {
	regs := []Regime{regime(t, "fast", 0.05), regime(t, "cut", 0.05)}
	m := Matrix{Regimes: regs, Policies: []string{PolicyStatic2, PolicyAdaptive}, Seeds: 2, Tuning: DefaultTuning, Parallel: 2}
	cells, err := m.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 4 {
		t.Fatalf("%d cells, want 4", len(cells))
	}
	for _, c := range cells {
		if len(c.Runs) != 2 || c.Runs[0].Seed != 1 || c.Runs[1].Seed != 2 || c.Hit.N != 2 {
			t.Errorf("%s/%s: runs %+v", c.Regime, c.Policy, c.Runs)
		}
		if c.Hit.Low > c.Hit.Mean || c.Hit.High < c.Hit.Mean {
			t.Errorf("%s/%s: interval %+v does not hold the mean", c.Regime, c.Policy, c.Hit)
		}
	}
	var out bytes.Buffer
	WriteTable(&out, cells)
	for _, row := range []string{"| fast | static-2s |", "| fast | adaptive |", "| cut | static-2s |", "| cut | adaptive |"} {
		if !strings.Contains(out.String(), row) {
			t.Errorf("table lacks %q:\n%s", row, out.String())
		}
	}
	goals := CheckGoals(cells)
	texts := ""
	for _, g := range goals {
		texts += g.Text + "\n"
	}
	for _, want := range []string{"fast: adaptive within", "cut: adaptive within", "cut: adaptive false warm"} {
		if !strings.Contains(texts, want) {
			t.Errorf("goals lack %q:\n%s", want, texts)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Run(ctx); err == nil {
		t.Error("a cancelled matrix reported no error")
	}
}

func TestFindNames(t *testing.T) {
	if _, err := FindRegimes([]string{"nope"}); err == nil {
		t.Error("unknown regime accepted")
	}
	if _, err := FindPolicies([]string{"static-3s"}); err == nil {
		t.Error("unknown policy accepted")
	}
	got, err := FindPolicies([]string{PolicyOracle, PolicyLoad})
	if err != nil || len(got) != 2 || got[0] != PolicyLoad {
		t.Errorf("FindPolicies = %v, %v; want report order", got, err)
	}
}
