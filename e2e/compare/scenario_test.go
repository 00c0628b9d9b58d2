package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warmroute/warmroute/e2e/harness"
)

// pauseRecorder is a simulator's /debug/events as far as scenarios use it.
type pauseRecorder struct {
	mu     sync.Mutex
	calls  []string
	status int
}

func (p *pauseRecorder) serve(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.calls = append(p.calls, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
		if p.status != 0 {
			w.WriteHeader(p.status)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

func (p *pauseRecorder) last() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.calls) == 0 {
		return ""
	}
	return p.calls[len(p.calls)-1]
}

func TestSetPaused(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		paused  bool
		wantErr bool
	}{
		{name: "pause", paused: true},
		{name: "release", paused: false},
		{name: "refused", status: http.StatusBadRequest, paused: true, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &pauseRecorder{status: tt.status}
			err := setPaused(context.Background(), []string{rec.serve(t)}, tt.paused)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %t", err, tt.wantErr)
			}
			if tt.wantErr && !errors.Is(err, errBadStatus) {
				t.Errorf("err = %v, want errBadStatus", err)
			}
			want := "POST /debug/events?paused=false"
			if tt.paused {
				want = "POST /debug/events?paused=true"
			}
			if got := rec.last(); got != want {
				t.Errorf("last call %q, want %q", got, want)
			}
		})
	}
}

func TestScenarioControls(t *testing.T) {
	tests := []struct {
		name     string
		control  func(context.Context, []string) error
		run      time.Duration
		wantLast string
	}{
		{name: "bursts end released", control: bursts, run: 50 * time.Millisecond, wantLast: "paused=false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &pauseRecorder{}
			ctx, cancel := context.WithTimeout(context.Background(), tt.run)
			defer cancel()
			if err := tt.control(ctx, []string{rec.serve(t)}); err != nil {
				t.Fatal(err)
			}
			if got := rec.last(); !strings.HasSuffix(got, tt.wantLast) {
				t.Errorf("last call %q, want ...%s", got, tt.wantLast)
			}
		})
	}
}

func TestFindScenariosAndPolicies(t *testing.T) {
	tests := []struct {
		name    string
		scs     []string
		pols    []string
		wantN   [2]int
		wantErr bool
	}{
		{name: "all", wantN: [2]int{8, 6}},
		{name: "report order kept", scs: []string{"cut", "fast"}, pols: []string{"oracle", "load"}, wantN: [2]int{2, 2}},
		{name: "unknown", scs: []string{"fast", "nope"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scs, err1 := findScenarios(tt.scs)
			pols, err2 := findPolicies(tt.pols)
			if err := errors.Join(err1, err2); (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			if tt.wantErr {
				return
			}
			if len(scs) != tt.wantN[0] || len(pols) != tt.wantN[1] {
				t.Errorf("got %d scenarios, %d policies", len(scs), len(pols))
			}
			if len(scs) > 1 && scs[0].Name != "fast" || len(pols) > 1 && pols[0] != policyLoad {
				t.Errorf("order not kept: %s %s", scs[0].Name, pols[0])
			}
		})
	}
}

func TestPlanFor(t *testing.T) {
	tune := adaptiveTuning{Interval: time.Second, Step: 200 * time.Millisecond}
	tests := []struct {
		policy     string
		advised    time.Duration
		wantPrefix bool
		wantDirect bool
		wantMax    time.Duration
	}{
		{policy: policyLoad, wantMax: 2 * time.Second},
		{policy: policyConfirmed, wantPrefix: true, wantMax: time.Nanosecond},
		{policy: policyStatic, wantPrefix: true, wantMax: 2 * time.Second},
		{policy: policyAdvised, advised: 120 * time.Millisecond, wantPrefix: true, wantMax: 120 * time.Millisecond},
		{policy: policyAdaptive, wantPrefix: true, wantMax: 5 * time.Second},
		{policy: modeAdvise, wantPrefix: true, wantMax: 2 * time.Second},
		{policy: policyOracle, wantDirect: true, wantMax: 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.policy, func(t *testing.T) {
			p := planFor(tt.policy, tt.advised, 10, tune)
			if p.Prefix != tt.wantPrefix || p.Direct != tt.wantDirect || p.maxTTL() != tt.wantMax {
				t.Errorf("plan %+v (max %s)", p, p.maxTTL())
			}
			if err := p.TTL.Validate(); err != nil {
				t.Errorf("invalid ttl config: %v", err)
			}
		})
	}
}

func TestCutSetup(t *testing.T) {
	rec := &pauseRecorder{}
	addr := rec.serve(t)
	st := &stack{sims: []*harness.EventSim{{Sim: &harness.Sim{Addr: addr}}}}
	if err := cut(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if got := rec.last(); got != "POST /debug/events?paused=true" {
		t.Errorf("last call %q, want a pause", got)
	}
}

// TestPerSimulatorArgs checks the scenarios whose simulators differ: mixed
// gives each its own event latency, and both seed each simulator's silent
// failures differently and repeatably.
func TestPerSimulatorArgs(t *testing.T) {
	scs, err := findScenarios([]string{"silent", "mixed", "fast"})
	if err != nil {
		t.Fatal(err)
	}
	fast, silent, mixed := scs[0], scs[1], scs[2] // report order
	if fast.simArgs(0, 1) != nil {
		t.Error("fast adds per-simulator flags")
	}
	seen := map[string]bool{}
	for i := range 3 {
		a := strings.Join(silent.simArgs(i, 5), " ")
		if seen[a] || a != strings.Join(silent.simArgs(i, 5), " ") {
			t.Errorf("simulator %d: fault seed flags %q repeated or not repeatable", i, a)
		}
		seen[a] = true
	}
	if strings.Join(silent.simArgs(0, 5), " ") == strings.Join(silent.simArgs(0, 6), " ") {
		t.Error("the workload seed does not change the fault seed")
	}
	lat := map[string]bool{}
	for i := range 3 {
		lat[strings.Join(mixed.simArgs(i, 1)[2:], " ")] = true
	}
	if len(lat) != 3 {
		t.Errorf("mixed gives %d distinct event paths to 3 simulators", len(lat))
	}
}
