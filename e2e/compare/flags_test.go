package main

import (
	"errors"
	"io"
	"testing"
	"time"
)

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr error
		check   func(t *testing.T, c config)
	}{
		{name: "defaults", check: func(t *testing.T, c config) {
			if c.Requests != 480 || c.Turns != 4 || c.Deadline != 14*time.Minute || len(c.Scenarios) != 0 {
				t.Errorf("defaults: %+v", c)
			}
		}},
		{name: "quick shrinks", args: []string{"-quick"}, check: func(t *testing.T, c config) {
			if c.Requests != 36 || c.Turns != 3 || c.minSamples != 10 {
				t.Errorf("quick: %+v", c)
			}
		}},
		{name: "quick keeps explicit flags", args: []string{"-quick", "-requests", "90"}, check: func(t *testing.T, c config) {
			if c.Requests != 90 || c.Turns != 3 {
				t.Errorf("quick with -requests: %+v", c)
			}
		}},
		{name: "lists", args: []string{"-scenarios", "fast, cut", "-policies", "load,oracle,"}, check: func(t *testing.T, c config) {
			if len(c.Scenarios) != 2 || len(c.Policies) != 2 {
				t.Errorf("lists: %q %q", c.Scenarios, c.Policies)
			}
		}},
		{name: "unknown scenario", args: []string{"-scenarios", "fast,slowest"}, wantErr: errUnknownScenario},
		{name: "unknown policy", args: []string{"-policies", "random"}, wantErr: errUnknownPolicy},
		{name: "zero requests", args: []string{"-requests", "0"}, wantErr: errBadFlag},
		{name: "negative workers", args: []string{"-workers", "-1"}, wantErr: errBadFlag},
		{name: "zero deadline", args: []string{"-deadline", "0s"}, wantErr: errBadFlag},
		{name: "negative think", args: []string{"-think", "-1ms"}, wantErr: errBadFlag},
		{name: "stray argument", args: []string{"extra"}, wantErr: errBadFlag},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseFlags(tt.args, io.Discard)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}

func TestParseFlagsMalformed(t *testing.T) {
	if _, err := parseFlags([]string{"-requests", "many"}, io.Discard); err == nil {
		t.Fatal("parseFlags accepted -requests many")
	}
}

func TestSpecCoversRequests(t *testing.T) {
	for _, n := range []int{1, 3, 4, 5, 240, 241} {
		c := config{Requests: n, Turns: 4}
		if s := c.spec(); s.Conversations*s.Turns < n || (s.Conversations-1)*s.Turns >= n {
			t.Errorf("requests %d: %d conversations of %d turns", n, s.Conversations, s.Turns)
		}
	}
}
