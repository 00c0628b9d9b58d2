// Command loadtest measures what warmroute adds to a request, with prefix
// routing on as in production. In one run it starts two event-publishing
// simulators (Qwen 3 tokenizer), a NATS server, one relay per simulator,
// warmroute with the same tokenizer and Envoy in front (ext_proc), and a
// second Envoy that sends straight to the first simulator. For each body
// size and concurrency level it alternates the two paths for -rounds rounds
// with the same kind of requests, and prints markdown tables of p50/p99
// latency (min/median/max over the rounds) and of the router's own CPU time
// per request, read from /proc/<pid>/stat: tokenization, keying, lookup,
// scoring, the ext_proc exchange and the ingestion of the KV events the
// requests cause (the relays publish every simulator's events to the
// router). Warm-up requests are not measured. Everything runs on loopback and
// stops after -requests or -duration per run, whichever comes first.
//
// With -pprof DIR the router serves /debug/pprof and each Envoy + warmroute
// run records a CPU profile of it into DIR.
//
//	go run ./e2e/loadtest [-concurrency 1,8] [-requests 500] [-body-bytes 8192,102400] [-rounds 3] [-pprof DIR]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/warmroute/warmroute/e2e/envoy"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

// config is the parsed command line.
type config struct {
	levels      []int
	sizes       []int // body bytes
	requests    int
	warmup      int
	rounds      int
	duration    time.Duration
	mode        envoy.Template
	modeName    string // as Envoy spells it, for the report
	envoyCPU    int
	keepLogs    bool
	maxFailures int
	pprofDir    string
	pprofSecs   int
	simBlocks   int
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	var levels, sizes, mode string
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&levels, "concurrency", "1,8", "comma-separated concurrency levels")
	fs.StringVar(&sizes, "body-bytes", "8192,102400", "comma-separated request body sizes in bytes")
	fs.IntVar(&c.requests, "requests", 500, "measured requests per run (one path, size, level and round)")
	fs.IntVar(&c.warmup, "warmup", 50, "unmeasured requests per size, level and path, first")
	fs.IntVar(&c.rounds, "rounds", 3, "rounds per size and level, each running Envoy alone and Envoy + warmroute")
	fs.DurationVar(&c.duration, "duration", 60*time.Second, "time limit per run")
	fs.StringVar(&mode, "mode", "full_duplex", "ext_proc request body mode: full_duplex or buffered")
	fs.IntVar(&c.envoyCPU, "envoy-concurrency", 2, "worker threads of each Envoy")
	fs.IntVar(&c.maxFailures, "max-failures", 10, "abort when more requests than this fail in one run")
	fs.BoolVar(&c.keepLogs, "keep-logs", false, "keep the log directory after exit")
	fs.StringVar(&c.pprofDir, "pprof", "", "directory for CPU profiles of the router during each Envoy + warmroute run (cpu-<bytes>-c<concurrency>-round<n>.pprof); empty records none")
	fs.IntVar(&c.pprofSecs, "pprof-seconds", 5, "length of each router CPU profile (set it to about a run's duration)")
	fs.IntVar(&c.simBlocks, "sim-blocks", 1<<20, "KV cache blocks per simulator: once full, each request's events also remove as many blocks as they store (an engine's steady state)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	return c, c.fill(levels, sizes, mode)
}

func (c *config) fill(levels, sizes, mode string) error {
	var err error
	if c.levels, err = intList(levels, 1, 1024); err != nil {
		return fmt.Errorf("-concurrency: %w", err)
	}
	if c.sizes, err = intList(sizes, 64, 8<<20); err != nil {
		return fmt.Errorf("-body-bytes: %w", err)
	}
	switch mode {
	case "full_duplex":
		c.mode, c.modeName = envoy.FullDuplex, "FULL_DUPLEX_STREAMED"
	case "buffered":
		c.mode, c.modeName = envoy.Buffered, "BUFFERED"
	default:
		return fmt.Errorf("-mode must be full_duplex or buffered, got %q", mode)
	}
	if c.requests < 1 || c.warmup < 0 || c.rounds < 1 || c.duration <= 0 || c.envoyCPU < 1 || c.pprofSecs < 1 || c.simBlocks < 1 {
		return errors.New("-requests, -rounds, -envoy-concurrency, -pprof-seconds and -sim-blocks must be positive, -warmup not negative, -duration positive")
	}
	return nil
}

// intList parses comma-separated integers between lo and hi.
func intList(s string, lo, hi int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < lo || n > hi {
			return nil, fmt.Errorf("want values between %d and %d, got %q", lo, hi, f)
		}
		out = append(out, n)
	}
	return out, nil
}
