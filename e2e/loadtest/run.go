package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/warmroute/warmroute/e2e/envoy"
	"github.com/warmroute/warmroute/e2e/harness"
)

const model = "load-model"

// zeroLatency makes the simulators answer at once, so the measured latency
// is the proxy path's, not a model's.
var zeroLatency = []string{"--ttft", "0s", "--prefill-per-token", "0s", "--decode-per-token", "0s",
	"--max-running", "1024", "--max-model-len", "10000000"}

// paths are the two ways to the simulators, in the order they are measured,
// and the router process whose CPU time is read.
type paths struct {
	direct, routed string // URLs of /v1/completions
	router         *harness.Process
	debugAddr      string // the router's debug address (/debug/pprof with -pprof)
	prose          string
	closers        []func() error
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "warmroute-loadtest-")
	if err != nil {
		return err
	}
	if c.keepLogs {
		defer fmt.Fprintln(stderr, "logs kept in", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	p, err := setup(ctx, c, dir, stderr)
	if err == nil {
		err = measureAll(ctx, c, p, stdout, stderr)
	}
	for i := len(p.closers) - 1; i >= 0; i-- {
		err = errors.Join(err, p.closers[i]())
	}
	return err
}

func setup(ctx context.Context, c config, dir string, progress io.Writer) (paths, error) {
	var p paths
	root, err := harness.ModuleRoot(ctx)
	if err != nil {
		return p, err
	}
	if p.prose, err = loadProse(filepath.Join(root, "tokenizer", "testdata", "golden.json.gz"), 2*maxOf(c.sizes)); err != nil {
		return p, err
	}
	envoyBin, err := harness.InstallEnvoy(ctx, root, progress)
	if err != nil {
		return p, err
	}
	tok, err := harness.Qwen3Tokenizer()
	if err != nil {
		return p, err
	}
	fmt.Fprintln(progress, "preparing warmroute, NATS, two simulators with relays and two Envoys ...")
	bin, err := harness.Warmroute(ctx, root, dir)
	if err != nil {
		return p, err
	}
	natsd, err := harness.BuildNATSD(ctx, root, dir)
	if err != nil {
		return p, err
	}
	// NATS runs as its own process, so the router's CPU time is the
	// router's alone (its embedded server would count there).
	var routerArgs []string
	if c.pprofDir != "" {
		if err := os.MkdirAll(c.pprofDir, 0o755); err != nil {
			return p, err
		}
		routerArgs = append(routerArgs, "--debug-pprof")
	}
	st, err := harness.StartPrefixStack(ctx, harness.PrefixOptions{Binary: bin, Envoy: envoyBin, Dir: dir, NATSD: natsd,
		Tokenizer: tok, Model: model, Sims: 2, NumBlocks: c.simBlocks, SimArgs: zeroLatency, EnvoyConcurrency: c.envoyCPU,
		RouterArgs: routerArgs})
	if err != nil {
		return p, err
	}
	p.closers = append(p.closers, st.Close)
	p.routed, p.router, p.debugAddr = st.URL("/v1/completions"), st.Router.Process, st.Router.DebugAddr
	ports, err := harness.FreePorts(2)
	if err != nil {
		return p, err
	}
	direct, err := harness.StartEnvoy(ctx, envoyBin, dir, "envoy-direct", envoy.Direct,
		envoy.Params{ListenPort: ports[0], AdminPort: ports[1], UpstreamPort: st.Sims[0].Port}, c.envoyCPU)
	if err != nil {
		return p, err
	}
	p.closers = append(p.closers, direct.Stop)
	p.direct = direct.URL("/v1/completions")
	return p, nil
}

func maxOf(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

func measureAll(ctx context.Context, c config, p paths, stdout, progress io.Writer) error {
	client := &http.Client{Transport: &http.Transport{
		MaxIdleConns: 2048, MaxIdleConnsPerHost: 1024, DisableCompression: true,
	}}
	prof := profiler{dir: c.pprofDir, debug: p.debugAddr, seconds: c.pprofSecs}
	var cells []cell
	for _, size := range c.sizes {
		bodies := newBodies(size, p.prose)
		for _, level := range c.levels {
			ce := cell{size: size, concurrency: level}
			for _, target := range []struct{ name, url string }{{"Envoy only", p.direct}, {"Envoy + warmroute", p.routed}} {
				d := driver{client: client, url: target.url, concurrency: level, bodies: bodies, maxFailures: c.maxFailures}
				if _, err := d.run(ctx, c.warmup, c.duration); err != nil {
					return fmt.Errorf("warming up %s at %d bytes, concurrency %d: %w", target.name, size, level, err)
				}
			}
			for round := range c.rounds {
				for _, routed := range []bool{round%2 == 1, round%2 == 0} { // alternate which path goes first
					url, name := p.direct, "Envoy only"
					if routed {
						url, name = p.routed, "Envoy + warmroute"
					}
					d := driver{client: client, url: url, concurrency: level, bodies: bodies, maxFailures: c.maxFailures}
					before, err := processCPU(p.router.Pid())
					if err != nil {
						return err
					}
					profiled := func() error { return nil }
					if routed {
						profiled = prof.start(ctx, size, level, round)
					}
					s, err := d.run(ctx, c.requests, c.duration)
					if err != nil {
						return fmt.Errorf("measuring %s at %d bytes, concurrency %d: %w", name, size, level, err)
					}
					after, err := processCPU(p.router.Pid())
					if err != nil {
						return err
					}
					if err := profiled(); err != nil {
						return err
					}
					s.routerCPU = after - before
					if routed {
						ce.routed = append(ce.routed, s)
					} else {
						ce.direct = append(ce.direct, s)
					}
					fmt.Fprintf(progress, "%d bytes, concurrency %d, round %d, %s: %d requests, p50 %s, p99 %s, router CPU %s/request\n",
						size, level, round+1, name, s.n, ms(s.p50), ms(s.p99), ms(s.cpuPerRequest()))
				}
			}
			cells = append(cells, ce)
		}
	}
	printReport(stdout, c, cells, runtime.NumCPU())
	return nil
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's CPU times: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// processCPU returns the user plus system CPU time pid has used, from
// fields 14 and 15 of /proc/<pid>/stat (its threads included).
func processCPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("reading router CPU time: %w", err)
	}
	return parseStatCPU(raw)
}

// parseStatCPU reads utime and stime from a /proc/<pid>/stat line. The
// command name (field 2) may hold spaces and parentheses, so fields are
// counted from its closing parenthesis.
func parseStatCPU(raw []byte) (time.Duration, error) {
	end := bytes.LastIndexByte(raw, ')')
	if end < 0 {
		return 0, errors.New("parsing /proc stat: no command name")
	}
	var state string
	var ppid, pgrp, session, tty, tpgid int
	var flags, minflt, cminflt, majflt, cmajflt, utime, stime uint64
	_, err := fmt.Sscan(string(raw[end+1:]), &state, &ppid, &pgrp, &session, &tty, &tpgid,
		&flags, &minflt, &cminflt, &majflt, &cmajflt, &utime, &stime)
	if err != nil {
		return 0, fmt.Errorf("parsing /proc stat: %w", err)
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}
