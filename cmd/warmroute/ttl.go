package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/warmroute/warmroute/cmd/warmroute/internal/gapsweep"
)

func init() {
	register("ttl", subcommand{
		summary: "speculative TTL tooling: validate (paired-gap sweep), advise (router's TTL table)",
		run:     runTTL,
	})
}

// ttlCommands are the sub-subcommands of "warmroute ttl".
var ttlCommands = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) error{
	"validate": runTTLValidate,
	"advise":   runTTLAdvise,
}

func runTTL(ctx context.Context, args []string, stderr io.Writer) error {
	return runTTLTo(ctx, args, os.Stdout, stderr)
}

// runTTLTo is runTTL with stdout passed in, for tests.
func runTTLTo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(stderr, "usage: warmroute ttl validate|advise [flags]\n\n"+
			"  validate  send paired requests at gaps around the TTL and report what each second request rested on\n"+
			"  advise    print the router's TTL advice table from its admin endpoint")
		if len(args) == 0 {
			return errors.New("ttl: missing command")
		}
		return flag.ErrHelp
	}
	c, ok := ttlCommands[args[0]]
	if !ok {
		return fmt.Errorf("ttl: unknown command %q (want validate or advise)", args[0])
	}
	return c(ctx, args[1:], stdout, stderr)
}

func runTTLValidate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("warmroute ttl validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o gapsweep.Options
	o.BindFlags(fs)
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("ttl validate: unexpected arguments %q", fs.Args())
	}
	s, err := gapsweep.New(o, nil)
	if err != nil {
		return fmt.Errorf("ttl validate: %w", err)
	}
	res, runErr := s.Run(ctx)
	if res != nil && (runErr == nil || len(res.Pairs) > 0) {
		if err := writeResult(stdout, res, *asJSON); err != nil {
			return errors.Join(runErr, err)
		}
	}
	if runErr != nil {
		return fmt.Errorf("ttl validate: %w", runErr)
	}
	return nil
}

func writeResult(w io.Writer, res *gapsweep.Result, asJSON bool) error {
	if !asJSON {
		return res.WriteTable(w)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res); err != nil {
		return fmt.Errorf("writing result: %w", err)
	}
	return nil
}

func runTTLAdvise(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("warmroute ttl advise", flag.ContinueOnError)
	fs.SetOutput(stderr)
	admin := fs.String("admin", "", "router admin base URL, e.g. http://router:9090 (required)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *admin == "" || fs.NArg() > 0 {
		return errors.New("ttl advise: want --admin URL and no arguments")
	}
	a := gapsweep.Admin{Base: *admin}
	if !*asJSON {
		b, err := a.Text(ctx)
		if err != nil {
			return fmt.Errorf("ttl advise: %w", err)
		}
		_, err = stdout.Write(b)
		return err
	}
	rep, err := a.Report(ctx)
	if err != nil {
		return fmt.Errorf("ttl advise: %w", err)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}
