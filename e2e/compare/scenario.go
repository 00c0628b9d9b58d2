package main

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// scenario is one state of the KV event pipeline: flags for every simulator
// and, optionally, a controller that pauses and releases their events while
// the workload runs.
type scenario struct {
	Name    string
	About   string
	SimArgs []string
	// PerSim, when set, adds flags for simulator i (0-based) of a run
	// with the given workload seed: endpoints that differ, and seeded faults.
	PerSim func(i int, seed uint64) []string
	// Control, when set, runs for the duration of the workload; it returns
	// when ctx ends, with events flowing again unless the scenario keeps them
	// cut on purpose.
	Control func(ctx context.Context, sims []string) error
	// Setup, when set, runs once just before the workload starts (and
	// before Control), so the first request already meets the scenario.
	Setup func(ctx context.Context, st *stack) error
	// Agents runs the agent workload over /v1/messages instead of the
	// completions workload.
	Agents bool
}

// burstPause and burstOpen shape the bursty scenario: events are held back
// for burstPause, then the relays catch up through replay, so the router's
// subscriber sees a backlog spike roughly every burstPause+burstOpen. The
// cycle opens first: a relay takes the first sequence number it sees as the
// start of the stream, so pausing before it has seen any batch would lose
// the system prompts' blocks for good rather than as a replayable gap.
const (
	burstPause = 1500 * time.Millisecond
	burstOpen  = 1000 * time.Millisecond
)

// scenarios lists every scenario in report order.
func scenarios() []scenario {
	return []scenario{
		{Name: "fast", About: "events in milliseconds"},
		{Name: "slow", About: "event delay 300ms + uniform jitter 0-920ms (p99 about 1.2s)",
			SimArgs: []string{"--event-delay", "300ms", "--event-jitter", "920ms"}},
		{Name: "bursty", About: fmt.Sprintf("events flow %s, then are paused %s and caught up by replay, repeatedly", burstOpen, burstPause),
			Control: bursts},
		{Name: "silent", About: "15% of requests answer normally but store nothing (no error), event delay 150ms + jitter 0-350ms",
			SimArgs: []string{"--silent-store-rate", "0.15", "--event-delay", "150ms", "--event-jitter", "350ms"},
			PerSim:  faultSeed},
		{Name: "mixed", About: "per-simulator event latency: ms / 150ms+0-350ms / 1s+0-3s (one slow subscriber), 10% silent stores",
			SimArgs: []string{"--silent-store-rate", "0.10"}, PerSim: mixedLatency},
		{Name: "cut", About: "engine events paused for the whole run (relays still send heartbeats)", Setup: cut},
		{Name: "relays-down", About: "every relay stopped for the whole run (no events, no heartbeats)",
			Setup: func(_ context.Context, st *stack) error { return st.stopRelays() }},
		{Name: "agents", About: "the agent workload over /v1/messages (system + tools, tool_use/tool_result turns), events in milliseconds",
			Agents: true},
	}
}

// simArgs is simulator i's own flags in this scenario.
func (sc scenario) simArgs(i int, seed uint64) []string {
	if sc.PerSim == nil {
		return nil
	}
	return sc.PerSim(i, seed)
}

// faultSeed gives each simulator its own seeded silent-store draw.
func faultSeed(i int, seed uint64) []string {
	return []string{"--fault-seed", strconv.FormatUint(seed*16+uint64(i)+1, 10)}
}

// mixedLatency gives the simulators different event paths: fast, mid and
// slow (p99 about 4 s), cycling beyond three.
func mixedLatency(i int, seed uint64) []string {
	lat := [][]string{nil, {"--event-delay", "150ms", "--event-jitter", "350ms"}, {"--event-delay", "1s", "--event-jitter", "3s"}}
	return append(faultSeed(i, seed), lat[i%len(lat)]...)
}

// bursts alternates releasing and pausing every simulator's events until
// ctx ends, then releases them.
func bursts(ctx context.Context, sims []string) error {
	defer setPaused(context.Background(), sims, false)
	for {
		if !sleep(ctx, burstOpen) {
			return nil
		}
		if err := setPaused(ctx, sims, true); err != nil {
			return err
		}
		if !sleep(ctx, burstPause) {
			return nil
		}
		if err := setPaused(ctx, sims, false); err != nil {
			return err
		}
	}
}

// cut pauses every simulator's events and leaves them paused: the pipeline
// stays down until the stack is torn down, so stale predictions stay stale.
// The relays keep sending heartbeats, so the router sees live engines whose
// events have stopped.
func cut(ctx context.Context, st *stack) error {
	return setPaused(ctx, st.simAddrs(), true)
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// setPaused posts the simulator's debug switch to each of sims (host:port).
func setPaused(ctx context.Context, sims []string, paused bool) error {
	for _, s := range sims {
		url := fmt.Sprintf("http://%s/debug/events?paused=%t", s, paused)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
		if err != nil {
			return fmt.Errorf("pausing events: %w", err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("pausing events of %s: %w", s, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNoContent {
			return fmt.Errorf("pausing events of %s: %w: status %d", s, errBadStatus, resp.StatusCode)
		}
	}
	return nil
}

// findScenarios returns the scenarios named in names, in report order.
func findScenarios(names []string) ([]scenario, error) {
	return pick(scenarios(), names, func(s scenario) string { return s.Name }, errUnknownScenario)
}

// pick keeps the items named in names (all when names is empty), in all's
// order, and fails on a name it does not know.
func pick[T any](all []T, names []string, name func(T) string, unknown error) ([]T, error) {
	if len(names) == 0 {
		return all, nil
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []T
	for _, it := range all {
		if want[name(it)] {
			out = append(out, it)
			delete(want, name(it))
		}
	}
	for n := range want {
		return nil, fmt.Errorf("%w: %q", unknown, n)
	}
	return out, nil
}
