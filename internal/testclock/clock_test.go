package testclock

import (
	"sync"
	"testing"
	"time"
)

func TestManual(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	tests := []struct {
		name string
		move func(*Manual)
		want time.Time
	}{
		{"stopped", func(*Manual) {}, start},
		{"advance", func(c *Manual) { c.Advance(3 * time.Second) }, start.Add(3 * time.Second)},
		{"advance twice", func(c *Manual) { c.Advance(time.Second); c.Advance(time.Minute) }, start.Add(61 * time.Second)},
		{"back", func(c *Manual) { c.Advance(-time.Hour) }, start.Add(-time.Hour)},
		{"set", func(c *Manual) { c.Set(time.Unix(5, 0)) }, time.Unix(5, 0)},
		{"set then advance", func(c *Manual) { c.Set(time.Unix(5, 0)); c.Advance(time.Second) }, time.Unix(6, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(start)
			tt.move(c)
			if got := c.Now(); !got.Equal(tt.want) {
				t.Fatalf("Now = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestManualZeroValue(t *testing.T) {
	var c Manual
	if !c.Now().IsZero() {
		t.Fatalf("zero clock reads %v", c.Now())
	}
	c.Advance(time.Second)
	if got := c.Now(); !got.Equal(time.Time{}.Add(time.Second)) {
		t.Fatalf("Now = %v after one second", got)
	}
}

// TestManualConcurrent is for the race detector: readers and writers at once.
func TestManualConcurrent(t *testing.T) {
	c := New(time.Unix(0, 0))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				c.Advance(time.Millisecond)
				_ = c.Now()
			}
		})
	}
	wg.Wait()
	if got, want := c.Now(), time.Unix(0, 0).Add(400*time.Millisecond); !got.Equal(want) {
		t.Fatalf("Now = %v, want %v", got, want)
	}
}
