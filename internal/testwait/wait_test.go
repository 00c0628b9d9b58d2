package testwait

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB that records a failure instead of ending the
// goroutine.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestUntil(t *testing.T) {
	tests := []struct {
		name     string
		holdsAt  int // the call from which cond holds; 0 never
		timeout  time.Duration
		wantFail string
		minCalls int
	}{
		{name: "holds at once", holdsAt: 1, timeout: time.Second, minCalls: 1},
		{name: "holds later", holdsAt: 5, timeout: 5 * time.Second, minCalls: 5},
		{name: "never holds", timeout: 30 * time.Millisecond, wantFail: "after 30ms: call", minCalls: 2},
		{name: "zero timeout still calls once", timeout: 0, wantFail: "after 0s: call 1", minCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{TB: t}
			calls := 0
			Until(r, tt.timeout, func() string {
				calls++
				if tt.holdsAt > 0 && calls >= tt.holdsAt {
					return ""
				}
				return fmt.Sprintf("call %d", calls)
			})
			if !strings.HasPrefix(r.failed, tt.wantFail) || (tt.wantFail == "") != (r.failed == "") {
				t.Fatalf("failure %q, want %q", r.failed, tt.wantFail)
			}
			if calls < tt.minCalls || tt.holdsAt > 0 && calls != tt.holdsAt {
				t.Fatalf("cond called %d times", calls)
			}
		})
	}
}

func TestThat(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
		want string
	}{
		{"holds", true, ""},
		{"does not hold", false, "relay connected not reached"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := That("relay connected", func() bool { return tt.ok })(); got != tt.want {
				t.Fatalf("That = %q, want %q", got, tt.want)
			}
		})
	}
}
