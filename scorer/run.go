package scorer

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// DefaultSweepInterval is Run's sweep period when none is given.
const DefaultSweepInterval = 100 * time.Millisecond

// runner is a pool Tokens with background work (drift comparison).
type runner interface {
	Run(ctx context.Context) error
}

// Run owns the pipeline's background work until ctx ends: it sweeps the
// index every interval (so predictions on quiet shards still end and report
// their outcomes), runs each pool tokenizer's background checks and, with
// Options.LearnMaxModelLen, keeps the max_model_len of pools that do not
// configure one (modellen.go). It
// returns once every goroutine it started has stopped. Call it once.
func (s *Scorer) Run(ctx context.Context, interval time.Duration) error {
	if interval <= 0 {
		interval = DefaultSweepInterval
	}
	var wg sync.WaitGroup
	for _, t := range s.opts.Tokens {
		if r, ok := t.(runner); ok {
			wg.Go(func() { r.Run(ctx) })
		}
	}
	if s.opts.Index != nil {
		wg.Go(func() { sweep(ctx, s.opts.Index.Sweep, interval) })
	}
	if s.opts.LearnMaxModelLen {
		wg.Go(func() { s.watchModelLen(ctx, &http.Client{}) })
	}
	wg.Wait()
	return nil
}

func sweep(ctx context.Context, fn func(), interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn()
		}
	}
}
