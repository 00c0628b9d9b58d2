package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/warmroute/warmroute/sim"
)

func init() {
	register("sim", subcommand{summary: "run an OpenAI-compatible model-server simulator", run: runSim})
}

func runSim(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("warmroute sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var opts sim.Options
	opts.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("sim: unexpected arguments %q", fs.Args())
	}
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
	fmt.Fprintf(stderr, "warmroute sim %s listening on %s\n", s.ID(), ln.Addr())
	if e := s.Engine(); e.EventsAddr() != "" {
		fmt.Fprintf(stderr, "warmroute sim %s publishing kv events on %s (replay %q)\n", s.ID(), e.EventsAddr(), e.ReplayAddr())
	}
	return s.Serve(ctx, ln)
}
