// Command loadtest measures the latency warmroute adds. In one run it starts
// one zero-latency simulator, warmroute with Envoy in front (ext_proc), and a
// second Envoy that sends straight to the simulator, then drives both with
// the same requests at each concurrency level and prints a markdown table of
// p50/p99 latency, the difference and the ratio. Warm-up requests are not
// measured. Everything runs on loopback and stops after -requests or
// -duration per level and path, whichever comes first.
//
//	go run ./e2e/loadtest [-concurrency 1,8,32] [-requests 2000] [-body-bytes 8192]
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
	requests    int
	warmup      int
	duration    time.Duration
	bodyBytes   int
	mode        envoy.Template
	modeName    string // as Envoy spells it, for the report
	envoyCPU    int
	keepLogs    bool
	maxFailures int
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	var levels, mode string
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&levels, "concurrency", "1,8,32", "comma-separated concurrency levels")
	fs.IntVar(&c.requests, "requests", 2000, "measured requests per level and path")
	fs.IntVar(&c.warmup, "warmup", 200, "unmeasured requests per level and path, first")
	fs.DurationVar(&c.duration, "duration", 30*time.Second, "time limit per level and path")
	fs.IntVar(&c.bodyBytes, "body-bytes", 8192, "request body size in bytes")
	fs.StringVar(&mode, "mode", "full_duplex", "ext_proc request body mode: full_duplex or buffered")
	fs.IntVar(&c.envoyCPU, "envoy-concurrency", 2, "worker threads of each Envoy")
	fs.IntVar(&c.maxFailures, "max-failures", 10, "abort when more requests than this fail in one level")
	fs.BoolVar(&c.keepLogs, "keep-logs", false, "keep the log directory after exit")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	return c, c.fill(levels, mode)
}

func (c *config) fill(levels, mode string) error {
	for _, f := range strings.Split(levels, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 1024 {
			return fmt.Errorf("-concurrency: want levels between 1 and 1024, got %q", f)
		}
		c.levels = append(c.levels, n)
	}
	switch mode {
	case "full_duplex":
		c.mode, c.modeName = envoy.FullDuplex, "FULL_DUPLEX_STREAMED"
	case "buffered":
		c.mode, c.modeName = envoy.Buffered, "BUFFERED"
	default:
		return fmt.Errorf("-mode must be full_duplex or buffered, got %q", mode)
	}
	if c.requests < 1 || c.warmup < 0 || c.duration <= 0 || c.bodyBytes < 64 || c.envoyCPU < 1 {
		return errors.New("-requests and -envoy-concurrency must be positive, -warmup not negative, -duration positive, -body-bytes at least 64")
	}
	return nil
}
