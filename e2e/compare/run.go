package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/index/ttl"
)

// sweepSlack is added to the longest live TTL and the index grace before the
// router's counters are read, so every prediction of the run has been swept
// and judged.
const sweepSlack = 400 * time.Millisecond

// maxFailureShare is the share of failed requests beyond which a run is an
// error rather than a row: its numbers would describe the failures.
const maxFailureShare = 0.05

// runner runs one scenario x policy at a time.
type runner struct {
	env    env
	cfg    config
	convs  []conversation
	agents []conversation // the agent workload, for scenarios with Agents
	client *http.Client
	log    io.Writer
}

// runScenario runs every policy of r.cfg in sc, measuring the advised TTL
// first when the advised policy is asked for.
func (r *runner) runScenario(ctx context.Context, sc scenario, policies []string) ([]result, error) {
	var advised *adviceNote
	var out []result
	for _, p := range policies {
		if p == policyAdvised && advised == nil {
			a, err := r.measureAdvice(ctx, sc)
			if err != nil {
				return out, err
			}
			advised = &a
		}
		plan := planFor(p, r.adviceTTL(advised), r.cfg.minSamples, r.cfg.tune)
		res, err := r.runOne(ctx, sc, p, plan)
		if err != nil {
			return out, fmt.Errorf("running %s/%s: %w", sc.Name, p, err)
		}
		if p == policyAdvised {
			res.Note = advised.String()
		}
		out = append(out, res)
	}
	return out, nil
}

// adviceNote is what the advise-mode run measured.
type adviceNote struct {
	Advice ttl.Advice
}

func (a adviceNote) String() string {
	if !a.Advice.Ready {
		return fmt.Sprintf("advice not ready (%d samples); ran at the default %s", a.Advice.Samples, ttl.DefaultStatic)
	}
	return fmt.Sprintf("advised %s from p99 %s (+backlog %s, jitter %s), %d samples",
		a.Advice.TTL.D(), a.Advice.P99.D(), a.Advice.Backlog.D(), a.Advice.Jitter.D(), a.Advice.Samples)
}

func (r *runner) adviceTTL(a *adviceNote) time.Duration {
	if a == nil || !a.Advice.Ready || a.Advice.TTL <= 0 {
		return ttl.DefaultStatic
	}
	return a.Advice.TTL.D()
}

func (r *runner) measureAdvice(ctx context.Context, sc scenario) (adviceNote, error) {
	res, err := r.runOne(ctx, sc, modeAdvise, planFor(modeAdvise, 0, r.cfg.minSamples, r.cfg.tune))
	if err != nil {
		return adviceNote{}, fmt.Errorf("measuring advice in %s: %w", sc.Name, err)
	}
	return adviceNote{Advice: res.report.Overall.Advice}, nil
}

// runOne starts a fresh stack, drives the workload through it while the
// scenario's control runs, and reads the simulators' usage and the router's
// counters.
func (r *runner) runOne(ctx context.Context, sc scenario, policy string, plan routerPlan) (result, error) {
	fmt.Fprintf(r.log, "run %s/%s ...\n", sc.Name, policy)
	dir, err := runDir(r.env.Dir, sc.Name, policy)
	if err != nil {
		return result{}, err
	}
	st, err := startStack(ctx, r.env, dir, sc, plan)
	if err != nil {
		return result{}, err
	}
	res, err := r.measure(ctx, st, sc, policy, plan)
	if cerr := st.close(); cerr != nil && err == nil {
		// A process that died during the run makes its numbers suspect.
		err = fmt.Errorf("stopping stack: %w", cerr)
	}
	return res, err
}

func (r *runner) measure(ctx context.Context, st *stack, sc scenario, policy string, plan routerPlan) (result, error) {
	send := viaOracle(r.client, newOracle(r.client, st.simAddrs()))
	switch {
	case sc.Agents && plan.Direct:
		send = viaOracleMessages(r.client, newOracle(r.client, st.simAddrs()))
	case sc.Agents:
		send = viaMessages(r.client, st.envoy.URL("/v1/messages"))
	case !plan.Direct:
		send = viaURL(r.client, st.envoy.URL("/v1/completions"))
	}
	if sc.Setup != nil {
		if err := sc.Setup(ctx, st); err != nil {
			return result{}, fmt.Errorf("setting up %s: %w", sc.Name, err)
		}
	}
	start := time.Now()
	t, cerr := r.driveWithControl(ctx, st, sc, send)
	res := summarize(sc.Name, policy, t, time.Since(start))
	if cerr != nil {
		return res, cerr
	}
	if err := checkFailures(t); err != nil {
		return res, err
	}
	if plan.Direct {
		return res, nil
	}
	return res, r.readRouter(ctx, st, plan, &res)
}

// driveWithControl runs the scenario's control for exactly as long as the
// workload runs.
func (r *runner) driveWithControl(ctx context.Context, st *stack, sc scenario, send target) (*tally, error) {
	convs := r.convs
	if sc.Agents {
		convs = r.agents
	}
	if sc.Control == nil {
		return drive(ctx, convs, r.cfg.Workers, send), nil
	}
	cctx, stop := context.WithCancel(ctx)
	var cerr error
	var wg sync.WaitGroup
	wg.Go(func() { cerr = sc.Control(cctx, st.simAddrs()) })
	t := drive(ctx, convs, r.cfg.Workers, send)
	stop()
	wg.Wait()
	return t, cerr
}

func checkFailures(t *tally) error {
	n := len(t.outcomes) + len(t.failures)
	if n == 0 {
		return fmt.Errorf("%w: no request completed", errTooManyFailures)
	}
	if float64(len(t.failures)) > maxFailureShare*float64(n) {
		return fmt.Errorf("%w: %d of %d, first: %w", errTooManyFailures, len(t.failures), n, t.failures[0])
	}
	return nil
}

// readRouter waits until every prediction of the run has expired, then
// reads the TTL report and the router's counters into res.
func (r *runner) readRouter(ctx context.Context, st *stack, plan routerPlan, res *result) error {
	rep, err := readTTLReport(ctx, r.client, st.router.DebugAddr)
	if err != nil {
		return err
	}
	if !sleep(ctx, longestTTL(rep, plan)+indexGrace+sweepSlack) {
		return ctx.Err()
	}
	if rep, err = readTTLReport(ctx, r.client, st.router.DebugAddr); err != nil {
		return err
	}
	m, err := harness.Scrape(ctx, st.router.MetricsURL())
	if err != nil {
		return err
	}
	res.fromRouter(m, rep, plan)
	return nil
}

// longestTTL is the longest TTL any endpoint gives new predictions now
// (adaptive TTLs differ per endpoint).
func longestTTL(rep ttl.Report, plan routerPlan) time.Duration {
	d := rep.Overall.Current.D()
	for _, row := range rep.Rows {
		d = max(d, row.Current.D())
	}
	if d == 0 {
		d = plan.maxTTL()
	}
	return d
}

func readTTLReport(ctx context.Context, c *http.Client, debug string) (ttl.Report, error) {
	var rep ttl.Report
	if err := callJSON(ctx, c, http.MethodGet, "http://"+debug+"/debug/ttl?format=json", nil, &rep); err != nil {
		return rep, fmt.Errorf("reading ttl report: %w", err)
	}
	return rep, nil
}

// runAll runs every scenario and policy within the total deadline. It
// returns the rows finished so far along with the first error.
func (r *runner) runAll(ctx context.Context, scs []scenario, policies []string) ([]result, error) {
	var out []result
	for _, sc := range scs {
		rows, err := r.runScenario(ctx, sc, policies)
		out = append(out, rows...)
		if err != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				err = fmt.Errorf("%w: %w", errDeadline, err)
			}
			return out, err
		}
	}
	return out, nil
}
