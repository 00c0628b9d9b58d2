package testclock_test

import (
	"fmt"
	"time"

	"github.com/warmroute/warmroute/internal/testclock"
)

func ExampleManual() {
	clock := testclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	expires := clock.Now().Add(time.Minute)
	clock.Advance(2 * time.Minute)
	fmt.Println(clock.Now().After(expires))
	// Output: true
}
