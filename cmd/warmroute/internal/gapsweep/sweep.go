package gapsweep

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/warmroute/warmroute/api"
)

// Sweep runs one paired-gap experiment. Make it with New; Run it once. It
// is not safe for concurrent use.
type Sweep struct {
	opts    Options
	debug   *DebugClient
	send    *sender
	prompts *Prompts
	now     func() time.Time
}

// New checks o (after defaults) and prepares a sweep that sends through
// client (nil: a client without overall timeout; each request has
// RequestTimeout).
func New(o Options, client *http.Client) (*Sweep, error) {
	o = o.WithDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if client == nil {
		client = &http.Client{}
	}
	s := &Sweep{opts: o, prompts: NewPrompts(o.PrefixWords, o.SuffixWords, o.Seed), now: time.Now}
	if o.Debug != "" {
		s.debug = &DebugClient{Base: o.Debug, Client: client}
	}
	s.send = &sender{client: client, url: trimBase(o.Target) + o.Path, opts: &s.opts, now: s.now}
	return s, nil
}

// Run plans the sweep, checks the budget, then sends the pairs gap by gap.
// It returns the result so far with an error when the plan is refused or
// the router's block size changes; a deadline is not an error, it sets
// Result.Stopped.
func (s *Sweep) Run(ctx context.Context) (*Result, error) {
	res, err := s.plan(ctx)
	if err != nil {
		return res, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.Deadline)
	defer cancel()
	for _, g := range res.gaps {
		for i := range s.opts.PairsPerGap {
			if err := s.checkBlockSize(ctx, res.BlockSize); err != nil {
				if ctx.Err() != nil {
					return s.stop(res, ctx), nil
				}
				return res.finish(), err
			}
			p := s.runPair(ctx, g, i)
			if ctx.Err() != nil {
				return s.stop(res, ctx), nil // the cut-off pair measured nothing
			}
			res.Pairs = append(res.Pairs, p)
			if p.Verdict == VerdictNoDecision {
				// Every further pair would measure nothing either.
				return res.finish(), fmt.Errorf("pair %s/%d: %w", p.Gap, p.Index, ErrNoDecision)
			}
		}
	}
	return res.finish(), nil
}

func (s *Sweep) stop(res *Result, ctx context.Context) *Result {
	res.Stopped = fmt.Sprintf("deadline (%s): %v", s.opts.Deadline, context.Cause(ctx))
	return res.finish()
}

// plan fixes block size, timing and gaps, and refuses an over-budget plan.
func (s *Sweep) plan(ctx context.Context) (*Result, error) {
	o := &s.opts
	res := &Result{Target: o.Target, Debug: o.Debug, Model: o.Model, LoRA: o.LoRA, CacheSalt: o.CacheSalt,
		PrefixWords: o.PrefixWords, SuffixWords: o.SuffixWords, Fault: o.Fault, PairsPerGap: o.PairsPerGap}
	grace, err := s.resolveBlockSize(ctx, res)
	if err != nil {
		return res, err
	}
	if err := s.resolveGaps(ctx, res, grace); err != nil {
		return res, err
	}
	if need := 2 * o.PairsPerGap * len(res.gaps); need > o.MaxRequests {
		return res, fmt.Errorf("planning %d gaps x %d pairs = %d requests, over --max-requests %d: %w",
			len(res.gaps), o.PairsPerGap, need, o.MaxRequests, ErrBudget)
	}
	return res, nil
}

// resolveBlockSize takes the router's block size, refusing a flag that
// disagrees; a router that does not serve it leaves the flag's value.
func (s *Sweep) resolveBlockSize(ctx context.Context, res *Result) (time.Duration, error) {
	res.BlockSize, res.BlockSizeFrom = s.opts.BlockSize, "flag"
	if s.debug == nil {
		return 0, nil
	}
	info, err := s.debug.Index(ctx)
	switch {
	case errors.Is(err, errNotServed) && s.opts.BlockSize > 0:
		res.BlockSizeFrom = "flag (router does not report it)"
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("reading the router's block size: %w: %w", ErrBlockSize, err)
	case s.opts.BlockSize > 0 && info.BlockSize != s.opts.BlockSize:
		return 0, fmt.Errorf("router block size %d, --block-size %d: %w", info.BlockSize, s.opts.BlockSize, ErrBlockSize)
	}
	res.BlockSize, res.BlockSizeFrom = info.BlockSize, "router"
	return info.Grace.D(), nil
}

// resolveGaps reads the router's timing when there is an debug endpoint
// and uses it to plan gaps unless they were given.
func (s *Sweep) resolveGaps(ctx context.Context, res *Result, grace time.Duration) error {
	res.gaps = s.opts.Gaps
	if s.debug != nil {
		rep, err := s.debug.Report(ctx)
		if err != nil && len(res.gaps) == 0 {
			return fmt.Errorf("planning gaps without --gaps: %w", err)
		}
		if err == nil {
			t := TimingFor(rep, s.opts.RequestModel())
			t.Grace = grace
			tj := t.json()
			res.Timing = &tj
			if len(res.gaps) == 0 {
				if res.gaps, err = PlanGaps(t); err != nil {
					return err
				}
			}
		}
	}
	if len(res.gaps) == 0 {
		return fmt.Errorf("planning gaps: %w", ErrNoGaps)
	}
	res.Gaps = gapsJSON(res.gaps)
	return nil
}

// checkBlockSize refuses to go on when the router's block size moved.
func (s *Sweep) checkBlockSize(ctx context.Context, want int) error {
	if s.debug == nil {
		return nil
	}
	info, err := s.debug.Index(ctx)
	if errors.Is(err, errNotServed) {
		return nil // resolveBlockSize already said the router does not report it
	}
	if err != nil {
		return fmt.Errorf("checking the router's block size mid-sweep: %w", err)
	}
	if info.BlockSize != want {
		return fmt.Errorf("router block size changed mid-sweep from %d to %d: %w", want, info.BlockSize, ErrBlockSize)
	}
	return nil
}

// runPair sends the first request, waits the gap from its sending, sends
// the second, and waits for both.
func (s *Sweep) runPair(ctx context.Context, g Gap, i int) Pair {
	a, b := s.prompts.Pair()
	var first Exchange
	var wg sync.WaitGroup
	start := s.now()
	wg.Go(func() { first = s.send.send(ctx, a, s.opts.Fault) })
	t := time.NewTimer(g.D - s.now().Sub(start))
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
	}
	second := s.send.send(ctx, b, FaultNone)
	wg.Wait()
	p := Pair{Gap: g.Label, GapD: api.Duration(g.D), Index: i, First: first, Second: second,
		Uncached: second.Usage.Uncached(), Verdict: Judge(s.opts.Fault, &first, &second)}
	p.ActualGap = api.Duration(second.sent.Sub(first.sent))
	p.SameEndpoint = first.Decision.Endpoint != "" && first.Decision.Endpoint == second.Decision.Endpoint
	return p
}
