package main

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// scriptedTarget answers like a simulator: injected failures get the
// status the test chooses, other requests succeed.
type scriptedTarget struct {
	mu         sync.Mutex
	failStatus int
	sent       []bool // fail flag of each request, in order
}

func (s *scriptedTarget) send(_ context.Context, _ string, fail bool) (outcome, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = append(s.sent, fail)
	if fail && s.failStatus != 0 {
		return outcome{}, &statusError{Code: s.failStatus}
	}
	return outcome{TTFT: 1, Prompt: 10, Cached: 5}, nil
}

func TestDriveInjectsFailures(t *testing.T) {
	convs := []conversation{
		{ID: 0, Prompts: []string{"a", "ab"}, Think: make([]time.Duration, 2), Fail: []bool{true, false}},
		{ID: 1, Prompts: []string{"c"}, Think: make([]time.Duration, 1), Fail: []bool{false}},
	}
	tests := []struct {
		name         string
		status       int
		wantInjected int
		wantFailures int
		wantErr      error
	}{
		{name: "500 is the injected failure", status: 500, wantInjected: 1},
		{name: "200 means the fault was ignored", status: 0, wantFailures: 1, wantErr: errNotFailed},
		{name: "other status is a failure", status: 503, wantFailures: 1, wantErr: errBadStatus},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &scriptedTarget{failStatus: tt.status}
			got := drive(context.Background(), convs, 2, st.send)
			if got.injected != tt.wantInjected || len(got.failures) != tt.wantFailures {
				t.Fatalf("injected %d, failures %v", got.injected, got.failures)
			}
			if tt.wantErr != nil && !errors.Is(got.failures[0], tt.wantErr) {
				t.Errorf("failure %v, want %v", got.failures[0], tt.wantErr)
			}
			if len(got.outcomes) != 3 || len(st.sent) != 4 {
				t.Errorf("%d outcomes of %d sends, want 3 of 4 (the failed turn is retried)", len(got.outcomes), len(st.sent))
			}
		})
	}
}

func TestDriveStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	st := &scriptedTarget{}
	convs := []conversation{{Prompts: []string{"a"}, Think: make([]time.Duration, 1), Fail: []bool{false}}}
	if got := drive(ctx, convs, 1, st.send); len(got.outcomes)+len(got.failures) > 1 {
		t.Errorf("cancelled drive sent %d requests", len(st.sent))
	}
}

func TestCheckFailures(t *testing.T) {
	ok := outcome{TTFT: 1}
	tests := []struct {
		name     string
		outcomes []outcome
		failures []error
		wantErr  bool
	}{
		{name: "none", wantErr: true},
		{name: "all good", outcomes: []outcome{ok, ok}},
		{name: "few failures", outcomes: make([]outcome, 99), failures: []error{errNoUsage}},
		{name: "too many failures", outcomes: make([]outcome, 9), failures: []error{errNoUsage}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkFailures(&tally{outcomes: tt.outcomes, failures: tt.failures})
			if (err != nil) != tt.wantErr {
				t.Errorf("err = %v, want error %t", err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, errTooManyFailures) {
				t.Errorf("err = %v, want errTooManyFailures", err)
			}
		})
	}
}
