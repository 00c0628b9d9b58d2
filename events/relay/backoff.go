package relay

import (
	"context"
	"math/rand/v2"
	"time"
)

// backoff yields exponentially growing, jittered delays between min and max.
// It is not safe for concurrent use; the zero value always waits zero.
type backoff struct {
	min, max, cur time.Duration
}

func newBackoff(min, max time.Duration) backoff { return backoff{min: min, max: max} }

// next returns the delay before the next attempt.
func (b *backoff) next() time.Duration {
	if b.cur == 0 {
		b.cur = b.min
	} else {
		b.cur = min(2*b.cur, b.max)
	}
	if b.cur <= 0 {
		return 0
	}
	// Jitter in [cur/2, cur) keeps many relays from reconnecting in step.
	return b.cur/2 + rand.N(b.cur/2+1)
}

// reset starts the sequence over after a success.
func (b *backoff) reset() { b.cur = 0 }

// sleep waits for d or until ctx is done, reporting whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
