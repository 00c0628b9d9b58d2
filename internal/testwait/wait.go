// Package testwait waits in tests for a condition that another goroutine
// or process makes true: it polls until the condition holds or a timeout
// passes, then fails the test with the condition's last complaint.
package testwait

import (
	"testing"
	"time"
)

// Polls start fast, for conditions that hold almost at once, and slow down
// to maxInterval so that conditions read over HTTP do not hammer a server.
const (
	firstInterval = time.Millisecond
	maxInterval   = 50 * time.Millisecond
)

// Until calls cond until it returns "" and fails t, saying what cond last
// returned, when timeout passes first. cond is called at least once, from
// the calling goroutine. Call Until from the test's goroutine, as t.Fatal
// requires.
func Until(t testing.TB, timeout time.Duration, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	interval := firstInterval
	for {
		why := cond()
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", timeout, why)
			return
		}
		time.Sleep(interval)
		interval = min(2*interval, maxInterval)
	}
}

// That adapts a boolean condition for Until: its complaint is what with
// " not reached".
func That(what string, ok func() bool) func() string {
	return func() string {
		if ok() {
			return ""
		}
		return what + " not reached"
	}
}
