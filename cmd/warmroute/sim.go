package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/warmroute/warmroute/internal/cli"
	"github.com/warmroute/warmroute/sim"
)

func init() {
	register("sim", subcommand{summary: "run an OpenAI-compatible model-server simulator", run: runSim})
}

func runSim(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var opts sim.Options
	opts.BindFlags(fs)
	logf := cli.AddLogFlags(fs)
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if err := opts.WithDefaults().Validate(); err != nil { // every option is a flag
		return cli.AsUsage(fmt.Errorf("sim: %w", err))
	}
	log := logf.Logger(stderr)
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", opts.Addr, err)
	}
	if opts.ID == "" && strings.HasSuffix(opts.Addr, ":0") {
		opts.ID = ln.Addr().String() // the flag names no usable port
	}
	s, err := sim.New(opts)
	if err != nil {
		ln.Close()
		return err
	}
	log.Info("warmroute sim listening", "id", s.ID(), "addr", ln.Addr().String())
	if e := s.Engine(); e.EventsAddr() != "" {
		log.Info("warmroute sim publishing kv events", "id", s.ID(), "events", e.EventsAddr(), "replay", e.ReplayAddr())
	}
	return s.Serve(ctx, ln)
}
