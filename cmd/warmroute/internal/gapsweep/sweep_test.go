package gapsweep

import (
	"context"
	"errors"
	"testing"
	"time"
)

func sweepOptions(url string) Options {
	return Options{Target: url, Debug: url, Model: "m", PrefixWords: 40, PairsPerGap: 2, Seed: 1}
}

func runSweep(t *testing.T, o Options) (*Result, error) {
	t.Helper()
	s, err := New(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s.Run(context.Background())
}

func TestSweepSuccess(t *testing.T) {
	f, srv := newFakeRouter(t, 16)
	res, err := runSweep(t, sweepOptions(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if res.BlockSize != 16 || res.BlockSizeFrom != "router" {
		t.Errorf("block size %d from %q", res.BlockSize, res.BlockSizeFrom)
	}
	if got := len(res.Gaps); got != 4 {
		t.Errorf("%d gaps planned from the report, want 4: %+v", got, res.Gaps)
	}
	if n := f.requests.Load(); n != int64(2*len(res.Pairs)) || len(res.Pairs) != 8 {
		t.Errorf("%d requests for %d pairs", n, len(res.Pairs))
	}
	for _, p := range res.Pairs {
		if p.Verdict != VerdictPredictedHit || !p.SameEndpoint || p.Uncached == nil || *p.Uncached != 20 {
			t.Errorf("pair %s/%d: verdict %q same %v uncached %v", p.Gap, p.Index, p.Verdict, p.SameEndpoint, p.Uncached)
		}
	}
	if res.Decisions["speculative"] != 8 || res.Decisions["none"] != 8 {
		t.Errorf("decisions %v, want 8 speculative and 8 none", res.Decisions)
	}
}

func TestSweepFaults(t *testing.T) {
	tests := []struct {
		fault Fault
		want  Verdict
	}{
		{FaultFailPrefill, VerdictFalseWarm},
		{FaultCancel, VerdictPredictedHit},
	}
	for _, tt := range tests {
		t.Run(string(tt.fault), func(t *testing.T) {
			_, srv := newFakeRouter(t, 16)
			o := sweepOptions(srv.URL)
			o.Fault, o.Gaps = tt.fault, []Gap{{LabelGiven, 20 * ms}} // the first must reach the fake first
			res, err := runSweep(t, o)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range res.Pairs {
				if p.Verdict != tt.want {
					t.Errorf("pair %d: verdict %q, want %q", p.Index, p.Verdict, tt.want)
				}
				if tt.fault == FaultCancel && !p.First.Cancelled {
					t.Errorf("pair %d: first request not cancelled", p.Index)
				}
			}
		})
	}
}

func TestSweepRefuses(t *testing.T) {
	tests := []struct {
		name  string
		setup func(f *fakeRouter, o *Options)
		want  error
		pairs int
	}{
		{"flag disagrees with router", func(_ *fakeRouter, o *Options) { o.BlockSize = 64 }, ErrBlockSize, 0},
		{"block size changes mid-sweep", func(f *fakeRouter, _ *Options) { f.blockSizeAfter = 3 }, ErrBlockSize, 1},
		{"router without index info and no flag", func(f *fakeRouter, _ *Options) { f.noIndex = true }, ErrBlockSize, 0},
		{"over budget", func(_ *fakeRouter, o *Options) { o.MaxRequests = 10 }, ErrBudget, 0},
		{"router keeps its decisions upstream", func(f *fakeRouter, _ *Options) { f.noDecision = true }, ErrNoDecision, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFakeRouter(t, 16)
			o := sweepOptions(srv.URL)
			tt.setup(f, &o)
			res, err := runSweep(t, o)
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
			if len(res.Pairs) != tt.pairs {
				t.Errorf("%d pairs measured before refusing, want %d", len(res.Pairs), tt.pairs)
			}
		})
	}
}

func TestSweepFlagBlockSizeWithOldRouter(t *testing.T) {
	f, srv := newFakeRouter(t, 16)
	f.noIndex = true
	o := sweepOptions(srv.URL)
	o.BlockSize, o.Gaps = 32, []Gap{{LabelGiven, 0}}
	res, err := runSweep(t, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.BlockSize != 32 || res.BlockSizeFrom != "flag (router does not report it)" || len(res.Pairs) != 2 {
		t.Errorf("block size %d from %q, %d pairs", res.BlockSize, res.BlockSizeFrom, len(res.Pairs))
	}
}

func TestSweepDeadline(t *testing.T) {
	_, srv := newFakeRouter(t, 16)
	o := sweepOptions(srv.URL)
	o.Gaps, o.Deadline = []Gap{{LabelGiven, 0}, {LabelGiven, time.Hour}}, 200*time.Millisecond
	res, err := runSweep(t, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped == "" || len(res.Pairs) != 2 {
		t.Errorf("stopped %q with %d pairs, want a deadline stop after the 2 pairs of the 0s gap", res.Stopped, len(res.Pairs))
	}
}
