// Command warmroute is the KV-cache-aware LLM router (serve), its event relay
// sidecar (relay), a model-server simulator (sim) and TTL tooling (ttl), in
// one binary.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"github.com/warmroute/warmroute/buildinfo"
	"github.com/warmroute/warmroute/internal/cli"
	"github.com/warmroute/warmroute/internal/grpcbuf"
)

// subcommand runs one mode of the binary. It owns its flag set, parses args
// (without the subcommand name) and returns when ctx is cancelled or it fails.
// Command-line problems come back as usage errors (see exit.go).
type subcommand struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// subcommands is filled by each subcommand's file in init, so adding a mode
// touches only its own file.
var subcommands = map[string]subcommand{}

func register(name string, c subcommand) { subcommands[name] = c }

func main() {
	grpcbuf.Install() // before any gRPC server exists
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(cli.ExitCode(err, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		usage(stderr)
		return cli.Usagef("missing subcommand")
	}
	switch args[0] {
	case "-h", "-help", "--help":
		usage(stderr)
		return cli.ErrHelp
	case "help":
		if len(args) == 1 {
			usage(stderr)
			return cli.ErrHelp
		}
		return run(ctx, []string{args[1], "-h"}, stdout, stderr)
	case "version", "-version", "--version":
		if len(args) > 1 {
			return cli.Usagef("version: unexpected arguments %q", args[1:])
		}
		_, err := fmt.Fprintln(stdout, buildinfo.Read())
		return err
	}
	c, ok := subcommands[args[0]]
	if !ok {
		usage(stderr)
		return cli.Usagef("unknown subcommand %q", args[0])
	}
	return c.run(ctx, args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: warmroute <subcommand> [flags]\n\nsubcommands:")
	names := make([]string, 0, len(subcommands))
	for n := range subcommands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, subcommands[n].summary)
	}
	fmt.Fprintf(w, "  %-8s %s\n", "version", "print the version, VCS revision and Go version")
	fmt.Fprintln(w, "\nRun 'warmroute <subcommand> -h' for its flags.")
}
