// Command warmroute is the KV-cache-aware LLM router (serve), its event relay
// sidecar (relay), a model-server simulator (sim) and TTL tooling (ttl), in
// one binary.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// subcommand runs one mode of the binary. It owns its flag set, parses args
// (without the subcommand name) and returns when ctx is cancelled or it fails.
type subcommand struct {
	summary string
	run     func(ctx context.Context, args []string, stderr io.Writer) error
}

// subcommands is filled by each subcommand's file in init, so adding a mode
// touches only its own file.
var subcommands = map[string]subcommand{}

func register(name string, c subcommand) { subcommands[name] = c }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "warmroute:", err)
		}
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return errors.New("missing subcommand")
		}
		return flag.ErrHelp
	}
	c, ok := subcommands[args[0]]
	if !ok {
		usage(stderr)
		return fmt.Errorf("unknown subcommand %q", args[0])
	}
	return c.run(ctx, args[1:], stderr)
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
	fmt.Fprintln(w, "\nRun 'warmroute <subcommand> -h' for its flags.")
}
