package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"

	"github.com/warmroute/warmroute/e2e/envoy"
	"github.com/warmroute/warmroute/e2e/harness"
)

const model = "load-model"

// zeroLatency makes the simulator answer at once, so the measured latency is
// the proxy path's, not a model's.
var zeroLatency = []string{"--ttft", "0s", "--prefill-per-token", "0s", "--decode-per-token", "0s",
	"--max-running", "1024", "--max-model-len", "10000000"}

// paths are the two ways to the simulator, in the order they are measured.
type paths struct {
	direct, routed string // URLs of /v1/completions
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
	envoyBin, err := harness.InstallEnvoy(ctx, root, progress)
	if err != nil {
		return p, err
	}
	fmt.Fprintln(progress, "preparing warmroute, a simulator and two Envoys ...")
	bin, err := harness.Warmroute(ctx, root, dir)
	if err != nil {
		return p, err
	}
	st, err := harness.StartStack(ctx, harness.Options{Binary: bin, Envoy: envoyBin, Dir: dir, Model: model,
		Sims: []harness.SimOptions{{Args: zeroLatency}}, Template: c.mode, EnvoyConcurrency: c.envoyCPU})
	if err != nil {
		return p, err
	}
	p.closers = append(p.closers, st.Close)
	p.routed = st.URL("/v1/completions")
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

func measureAll(ctx context.Context, c config, p paths, stdout, progress io.Writer) error {
	client := &http.Client{Transport: &http.Transport{
		MaxIdleConns: 2048, MaxIdleConnsPerHost: 1024, DisableCompression: true,
	}}
	bodies := newBodies(c.bodyBytes)
	var rows []row
	for _, level := range c.levels {
		r := row{concurrency: level}
		for _, target := range []struct {
			name, url string
			out       *stats
		}{{"Envoy only", p.direct, &r.direct}, {"Envoy + warmroute", p.routed, &r.routed}} {
			d := driver{client: client, url: target.url, concurrency: level, bodies: bodies, maxFailures: c.maxFailures}
			if _, err := d.run(ctx, c.warmup, c.duration); err != nil {
				return fmt.Errorf("warming up %s at concurrency %d: %w", target.name, level, err)
			}
			s, err := d.run(ctx, c.requests, c.duration)
			if err != nil {
				return fmt.Errorf("measuring %s at concurrency %d: %w", target.name, level, err)
			}
			*target.out = s
			fmt.Fprintf(progress, "concurrency %d, %s: %d requests, p50 %s, p99 %s\n", level, target.name, s.n, ms(s.p50), ms(s.p99))
		}
		rows = append(rows, r)
	}
	printReport(stdout, c, rows, runtime.NumCPU())
	return nil
}
