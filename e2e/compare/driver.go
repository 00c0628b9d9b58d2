package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
)

// target sends one prompt somewhere and reports what came back: through
// Envoy and the router, or straight to the oracle's choice.
type target func(ctx context.Context, prompt string, fail bool) (outcome, error)

func viaURL(c *http.Client, url string) target {
	return func(ctx context.Context, prompt string, fail bool) (outcome, error) {
		return complete(ctx, c, url, prompt, fail)
	}
}

func viaOracle(c *http.Client, o *oracle) target {
	return func(ctx context.Context, prompt string, fail bool) (outcome, error) {
		i, err := o.pick(ctx, prompt)
		if err != nil {
			return outcome{}, err
		}
		defer o.done(i)
		return complete(ctx, c, "http://"+o.sims[i]+"/v1/completions", prompt, fail)
	}
}

// tally collects a run's outcomes; safe for concurrent use.
type tally struct {
	mu       sync.Mutex
	outcomes []outcome
	failures []error
	injected int // first attempts that failed as the workload asked
}

func (t *tally) add(o outcome, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		t.failures = append(t.failures, err)
		return
	}
	t.outcomes = append(t.outcomes, o)
}

// drive runs convs on workers concurrent conversations. Each conversation
// sends its turns in order, each after the previous answer plus its think
// time, so follow-ups often arrive before the previous turn's events.
func drive(ctx context.Context, convs []conversation, workers int, send target) *tally {
	t := &tally{}
	work := make(chan conversation)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for c := range work {
				runConversation(ctx, c, send, t)
			}
		})
	}
	for _, c := range convs {
		select {
		case work <- c:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	return t
}

func runConversation(ctx context.Context, c conversation, send target, t *tally) {
	for i, p := range c.Prompts {
		if ctx.Err() != nil {
			return
		}
		if c.Fail[i] {
			injectFailure(ctx, c.ID, i, p, send, t)
		}
		o, err := send(ctx, p, false)
		if err != nil {
			err = fmt.Errorf("conversation %d turn %d: %w", c.ID, i, err)
		}
		t.add(o, err)
		if !sleep(ctx, c.Think[i]) {
			return
		}
	}
}

// injectFailure sends a turn's first attempt with its prefill failing. Only
// the expected 500 counts as injected; anything else is a failure of the run.
func injectFailure(ctx context.Context, conv, turn int, prompt string, send target, t *tally) {
	_, err := send(ctx, prompt, true)
	var se *statusError
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case errors.As(err, &se) && se.Code == http.StatusInternalServerError:
		t.injected++
	case err == nil:
		t.failures = append(t.failures, fmt.Errorf("conversation %d turn %d: %w", conv, turn, errNotFailed))
	default:
		t.failures = append(t.failures, fmt.Errorf("conversation %d turn %d: %w", conv, turn, err))
	}
}
