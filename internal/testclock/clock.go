// Package testclock provides a clock that moves only when a test says so,
// so that expiry, ages and windows are tested without sleeping.
package testclock

import (
	"sync"
	"time"
)

// Manual is a manually set clock. Pass its Now where code takes a
// func() time.Time. Safe for concurrent use; the zero value is a clock
// stopped at the zero time.
type Manual struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a clock stopped at start.
func New(start time.Time) *Manual { return &Manual{now: start} }

// Now returns the clock's time.
func (c *Manual) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t, forwards or back.
func (c *Manual) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// Advance moves the clock forwards by d (backwards when d is negative).
func (c *Manual) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
