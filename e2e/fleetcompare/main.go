// Command fleetcompare compares warmroute's speculative-TTL policies over
// many seeds in virtual time: the real scorer, index and TTL controller
// against modelled engines (package e2e/fleet), every regime x policy x
// seed, printed as a markdown table of means with 95% confidence intervals
// and the comparison's goals:
//
//	go run ./e2e/fleetcompare [-seeds 10] [-regimes long-prefill,silent] \
//	    [-policies static-2s,adaptive] [-scale 1] [-parallel 2] [-quick] [-json out.json]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/warmroute/warmroute/e2e/fleet"
	"github.com/warmroute/warmroute/internal/benchcpu"
	"github.com/warmroute/warmroute/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(cli.ExitCode(run(ctx, os.Args[1:], os.Stdout, os.Stderr), os.Stderr))
}

type config struct {
	seeds, parallel int
	scale           float64
	quick           bool
	regimes, pols   []string
	jsonPath        string
	deadline        time.Duration
	tuning          fleet.Tuning
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	c := config{tuning: fleet.DefaultTuning}
	var regs, pols string
	fs := flag.NewFlagSet("fleetcompare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.seeds, "seeds", 10, "seeds per regime x policy (at least 2 for a confidence interval)")
	fs.IntVar(&c.parallel, "parallel", 2, "runs at once")
	fs.Float64Var(&c.scale, "scale", 1, "workload size factor in (0,1]")
	fs.BoolVar(&c.quick, "quick", false, "a small run for CI: 3 seeds, workloads scaled to 0.25 (unless set)")
	fs.StringVar(&regs, "regimes", "", "comma-separated regimes (default all)")
	fs.StringVar(&pols, "policies", "", "comma-separated policies (default all: "+strings.Join(fleet.Policies, ",")+")")
	fs.StringVar(&c.jsonPath, "json", "", "also write every run as JSON to this file")
	fs.DurationVar(&c.deadline, "deadline", 30*time.Minute, "total deadline; cells finished by then are still printed")
	fs.IntVar(&c.tuning.MinSamples, "min-samples", c.tuning.MinSamples, "TTL controller minSamples")
	fs.DurationVar(&c.tuning.Interval, "interval", c.tuning.Interval, "TTL controller recompute interval")
	fs.DurationVar(&c.tuning.Step, "step", c.tuning.Step, "adaptive TTL largest move per interval")
	if err := cli.ParseFlags(fs, args); err != nil {
		return c, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if c.quick {
		if !set["seeds"] {
			c.seeds = 3
		}
		if !set["scale"] {
			c.scale = 0.25
		}
	}
	c.regimes, c.pols = split(regs), split(pols)
	switch {
	case c.seeds < 1:
		return c, cli.Usagef("-seeds must be positive, got %d", c.seeds)
	case c.parallel < 1:
		return c, cli.Usagef("-parallel must be positive, got %d", c.parallel)
	case !(c.scale > 0 && c.scale <= 1):
		return c, cli.Usagef("-scale must be in (0,1], got %g", c.scale)
	case c.deadline <= 0:
		return c, cli.Usagef("-deadline must be positive, got %s", c.deadline)
	}
	return c, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	regs, err := fleet.FindRegimes(c.regimes)
	if err != nil {
		return cli.AsUsage(err)
	}
	pols, err := fleet.FindPolicies(c.pols)
	if err != nil {
		return cli.AsUsage(err)
	}
	for i := range regs {
		regs[i] = regs[i].Scaled(c.scale)
	}
	ctx, cancel := context.WithTimeout(ctx, c.deadline)
	defer cancel()
	start, cpu := time.Now(), benchcpu.Now()
	m := fleet.Matrix{Regimes: regs, Policies: pols, Seeds: c.seeds, Tuning: c.tuning, Parallel: c.parallel, Progress: stderr}
	cells, err := m.Run(ctx)
	fleet.WriteRegimes(stdout, regs)
	fmt.Fprintln(stdout)
	fleet.WriteTable(stdout, cells)
	fmt.Fprintln(stdout)
	goals := fleet.CheckGoals(cells)
	fleet.WriteGoals(stdout, goals)
	fmt.Fprintf(stderr, "%d cells x %d seeds in %s wall, %s process CPU\n", len(cells), c.seeds,
		time.Since(start).Round(time.Second), (benchcpu.Now() - cpu).Round(time.Second))
	if c.jsonPath != "" {
		err = errors.Join(err, writeJSON(c.jsonPath, cells, goals))
	}
	return err
}

func writeJSON(path string, cells []fleet.Cell, goals []fleet.Goal) error {
	b, err := json.MarshalIndent(struct {
		Cells []fleet.Cell
		Goals []fleet.Goal
	}{cells, goals}, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding json report: %w", err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("writing json report: %w", err)
	}
	return nil
}

// split reads a comma-separated list, ignoring blanks.
func split(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
}
