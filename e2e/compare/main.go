// Command compare measures warmroute's speculative-TTL policies against each
// other and against an oracle, end to end: a seeded multi-turn workload with
// shared system prompts goes through real Envoy and `warmroute serve` (real
// Qwen3 tokenizer, KV events from `warmroute sim` through `warmroute relay`)
// to three simulators whose cost model makes cache hits visible in TTFT.
//
// Each event-latency scenario (fast, slow, bursty, silent, mixed, cut,
// relays-down, and agents: agent conversations with tools over /v1/messages)
// runs each policy
// (load only, confirmed-only prefix routing, static 2s TTL, the TTL an
// advise-mode run measured, adaptive TTL, and an oracle that reads the
// simulators' true caches) on a fresh stack, and the results are printed as a
// markdown table, with the goals checked beneath it:
//
//	go run ./e2e/compare [-quick] [-requests 240] [-deadline 14m] \
//	    [-scenarios fast,slow] [-policies load,adaptive] [-json out.json]
//
// It needs Envoy (installed on first use, as for the e2e suite) and the
// Qwen3 tokenizer files (fetched into .cache/tokenizers on first use).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/warmroute/warmroute/e2e/harness"
)

// simCosts is every simulator's cost model: a cache hit saves 200us of
// prefill per token, so a 400-token miss costs 80ms more TTFT than a hit.
// Eight slots per simulator keep six concurrent conversations from queueing
// much, so TTFT mostly reflects prefill, not waiting.
var simCosts = []string{"--ttft", "10ms", "--prefill-per-token", "200us", "--decode-per-token", "2ms",
	"--max-running", "8"}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.Deadline)
	defer cancel()
	dir, err := os.MkdirTemp("", "warmroute-compare-")
	if err != nil {
		return fmt.Errorf("making work directory: %w", err)
	}
	if c.keepLogs {
		defer fmt.Fprintln(stderr, "logs kept in", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	e, err := prepare(ctx, c, dir, stderr)
	if err != nil {
		return err
	}
	return compare(ctx, c, e, stdout, stderr)
}

// prepare finds Envoy, the tokenizer files and the warmroute binary.
func prepare(ctx context.Context, c config, dir string, log io.Writer) (env, error) {
	root, err := harness.ModuleRoot(ctx)
	if err != nil {
		return env{}, err
	}
	tok, err := harness.Qwen3Tokenizer() // fetched into .cache/tokenizers when missing
	if err != nil {
		return env{}, fmt.Errorf("finding tokenizer files: %w", err)
	}
	envoyBin, err := harness.InstallEnvoy(ctx, root, log)
	if err != nil {
		return env{}, err
	}
	bin, err := harness.Warmroute(ctx, root, dir)
	if err != nil {
		return env{}, err
	}
	return env{Binary: bin, Envoy: envoyBin, Tokenizer: tok, Dir: dir, Sims: c.Sims, SimArgs: simCosts, Seed: c.Seed}, nil
}

// compare runs the comparison and prints what finished, even after an error.
func compare(ctx context.Context, c config, e env, stdout, log io.Writer) error {
	scs, err := findScenarios(c.Scenarios)
	if err != nil {
		return err
	}
	pols, err := findPolicies(c.Policies)
	if err != nil {
		return err
	}
	agents, err := buildAgentWorkload(c.agentSpec())
	if err != nil {
		return err
	}
	r := &runner{env: e, cfg: c, convs: buildWorkload(c.spec()), agents: agents, log: log,
		client: &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	start := time.Now()
	rows, err := r.runAll(ctx, scs, pols)
	goals := checkGoals(rows)
	writeTable(stdout, rows)
	writeGoals(stdout, goals)
	fmt.Fprintf(log, "compared %d runs in %s\n", len(rows), time.Since(start).Round(time.Second))
	if c.jsonPath != "" {
		err = errors.Join(err, writeJSONFile(c.jsonPath, c, rows, goals))
	}
	return err
}

func writeJSONFile(path string, c config, rows []result, goals []goal) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing json report: %w", err)
	}
	err = writeJSON(f, c, rows, goals)
	return errors.Join(err, f.Close())
}
