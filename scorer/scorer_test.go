package scorer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

var testPools = []PoolConfig{
	{Name: "llama", Models: []string{"meta-llama/Llama-3.1-8B", "llama-alias"}, Endpoints: []string{"10.0.0.1:8000", "10.0.0.2:8000", "10.0.0.3:8000"}},
	{Name: "qwen", Endpoints: []string{"10.0.1.1:8000"}},
}

func TestPickPoolSelection(t *testing.T) {
	tests := []struct {
		name        string
		defaultPool string
		model       string
		subset      []string
		wantPool    string
		wantErr     error
		wantIn      []string
	}{
		{name: "pool name", model: "llama", wantPool: "llama"},
		{name: "model name", model: "meta-llama/Llama-3.1-8B", wantPool: "llama"},
		{name: "alias", model: "llama-alias", wantPool: "llama"},
		{name: "second pool", model: "qwen", wantPool: "qwen", wantIn: []string{"10.0.1.1:8000"}},
		{name: "unknown model", model: "gpt-9", wantErr: ErrUnknownModel},
		{name: "no model and two pools", model: "", wantErr: ErrUnknownModel},
		{name: "unknown model with default", defaultPool: "qwen", model: "gpt-9", wantPool: "qwen"},
		{name: "no model with default", defaultPool: "llama", model: "", wantPool: "llama"},
		{name: "subset restricts", model: "llama", subset: []string{"10.0.0.2:8000"}, wantPool: "llama", wantIn: []string{"10.0.0.2:8000"}},
		{name: "subset with spaces", model: "llama", subset: []string{" 10.0.0.3:8000 "}, wantPool: "llama", wantIn: []string{"10.0.0.3:8000"}},
		{name: "empty subset", model: "llama", subset: []string{}, wantErr: ErrNoEndpoint},
		{name: "subset outside pool", model: "llama", subset: []string{"10.9.9.9:1"}, wantErr: ErrNoEndpoint},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(NewPools(testPools, tt.defaultPool), &Load{}, Options{})
			d, err := s.Pick(context.Background(), &Request{Model: tt.model, Subset: tt.subset})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Pick error = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Pick: %v", err)
			}
			if d.Pool != tt.wantPool {
				t.Errorf("pool = %q, want %q", d.Pool, tt.wantPool)
			}
			if tt.wantIn != nil && !slices.Contains(tt.wantIn, d.Endpoint) {
				t.Errorf("endpoint = %q, want one of %v", d.Endpoint, tt.wantIn)
			}
		})
	}
}

func TestSinglePoolIsImplicitDefaultForNoModel(t *testing.T) {
	s := New(NewPools(testPools[1:], ""), &Load{}, Options{})
	if _, err := s.Pick(context.Background(), &Request{}); err != nil {
		t.Fatalf("no-model request with one pool: %v", err)
	}
	if _, err := s.Pick(context.Background(), &Request{Model: "other"}); !errors.Is(err, ErrUnknownModel) {
		t.Fatalf("unknown model with one pool: err = %v, want ErrUnknownModel", err)
	}
}

func TestPickPrefersLeastLoaded(t *testing.T) {
	load := &Load{}
	s := New(NewPools(testPools, ""), load, Options{Fallbacks: 2})
	load.add("10.0.0.1:8000", 3)
	load.add("10.0.0.2:8000", 1)
	d, err := s.Pick(context.Background(), &Request{Model: "llama"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"10.0.0.3:8000", "10.0.0.2:8000", "10.0.0.1:8000"}
	if got := d.Targets(); !slices.Equal(got, want) {
		t.Fatalf("targets = %v, want %v", got, want)
	}
	if !strings.Contains(d.Reason, "basis=load") {
		t.Errorf("reason %q does not name its basis", d.Reason)
	}
}

func TestFallbacksBoundedByPoolSize(t *testing.T) {
	s := New(NewPools(testPools, ""), &Load{}, Options{Fallbacks: 10})
	d, err := s.Pick(context.Background(), &Request{Model: "qwen"})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Fallbacks) != 0 {
		t.Fatalf("fallbacks = %v, want none for a one-endpoint pool", d.Fallbacks)
	}
}

func TestTieBreakIsRandom(t *testing.T) {
	s := New(NewPools(testPools, ""), &Load{}, Options{})
	seen := map[string]int{}
	for range 300 {
		d, err := s.Pick(context.Background(), &Request{Model: "llama"})
		if err != nil {
			t.Fatal(err)
		}
		seen[d.Endpoint]++
	}
	// With three equally loaded endpoints, the chance that 300 uniform picks
	// miss one entirely is 3*(2/3)^300, about 1e-52.
	if len(seen) != 3 {
		t.Fatalf("picks over equal endpoints = %v, want all three used", seen)
	}
}

func TestDecisionCommitRelease(t *testing.T) {
	tests := []struct {
		name    string
		commits int
		release int
		want    int64
	}{
		{name: "abandoned", commits: 0, release: 1, want: 0},
		{name: "committed only", commits: 1, release: 0, want: 1},
		{name: "committed and released", commits: 1, release: 1, want: 0},
		{name: "double commit and release", commits: 2, release: 3, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			load := &Load{}
			s := New(NewPools(testPools[1:], ""), load, Options{})
			d, err := s.Pick(context.Background(), &Request{Model: "qwen"})
			if err != nil {
				t.Fatal(err)
			}
			for range tt.commits {
				d.Commit()
			}
			for range tt.release {
				d.Release()
			}
			if got := load.InFlight(d.Endpoint); got != tt.want {
				t.Fatalf("in-flight = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestConcurrentDecisionsReturnToZero(t *testing.T) {
	load := &Load{}
	s := New(NewPools(testPools, ""), load, Options{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 500 {
				d, err := s.Pick(context.Background(), &Request{Model: "llama"})
				if err != nil {
					t.Error(err)
					return
				}
				d.Commit()
				d.Release()
				d.Release()
			}
		})
	}
	wg.Wait()
	for ep, n := range load.Snapshot() {
		if n != 0 {
			t.Errorf("%s in-flight = %d after all releases", ep, n)
		}
	}
}

func TestSetEndpoints(t *testing.T) {
	pools := NewPools(testPools, "")
	s := New(pools, &Load{}, Options{})
	if !pools.SetEndpoints("qwen", nil) {
		t.Fatal("SetEndpoints on an existing pool reported false")
	}
	if _, err := s.Pick(context.Background(), &Request{Model: "qwen"}); !errors.Is(err, ErrNoEndpoint) {
		t.Fatalf("empty pool: err = %v, want ErrNoEndpoint", err)
	}
	if pools.SetEndpoints("missing", []string{"10.0.0.1:1"}) {
		t.Fatal("SetEndpoints on a missing pool reported true")
	}
}

func TestLoadCollector(t *testing.T) {
	load := &Load{}
	load.add("10.0.0.1:8000", 2)
	load.add("10.0.0.2:8000", 0)
	reg := prometheus.NewPedanticRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	New(NewPools(nil, ""), load, Options{Metrics: m})
	New(NewPools(nil, ""), &Load{}, Options{Metrics: m}) // a second Scorer does not take the gauges over
	want := `
# HELP warmroute_scorer_inflight_requests Requests routed to an endpoint whose responses have not ended, as tracked by this router.
# TYPE warmroute_scorer_inflight_requests gauge
warmroute_scorer_inflight_requests{endpoint="10.0.0.1:8000"} 2
warmroute_scorer_inflight_requests{endpoint="10.0.0.2:8000"} 0
# HELP warmroute_scorer_queued_prefill_tokens Prompt tokens routed to an endpoint and not expected to be cached there, whose responses have not started.
# TYPE warmroute_scorer_queued_prefill_tokens gauge
warmroute_scorer_queued_prefill_tokens{endpoint="10.0.0.1:8000"} 0
warmroute_scorer_queued_prefill_tokens{endpoint="10.0.0.2:8000"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"warmroute_scorer_inflight_requests", "warmroute_scorer_queued_prefill_tokens"); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkPick(b *testing.B) {
	for _, n := range []int{8, 64, 512} {
		b.Run(fmt.Sprintf("endpoints=%d", n), func(b *testing.B) {
			eps := make([]string, n)
			for i := range eps {
				eps[i] = fmt.Sprintf("10.0.%d.%d:8000", i/250, i%250+1)
			}
			s := New(NewPools([]PoolConfig{{Name: "m", Endpoints: eps}}, ""), &Load{}, Options{})
			req := &Request{Model: "m"}
			b.ReportAllocs()
			for b.Loop() {
				d, err := s.Pick(context.Background(), req)
				if err != nil {
					b.Fatal(err)
				}
				d.Commit()
				d.Release()
			}
		})
	}
}
