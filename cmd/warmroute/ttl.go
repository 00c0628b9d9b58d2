package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/warmroute/warmroute/cmd/warmroute/internal/gapsweep"
	"github.com/warmroute/warmroute/internal/cli"
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

const ttlUsage = "usage: warmroute ttl validate|advise [flags]\n\n" +
	"  validate  send paired requests at gaps around the TTL and report what each second request rested on\n" +
	"  advise    print the router's TTL advice table from its debug endpoint\n\n" +
	"Run 'warmroute ttl <command> -h' for its flags."

// runTTL dispatches to a ttl command. --log-format and --log-level may come
// before the command too (warmroute ttl --log-format json validate ...); they
// are handed on to it.
func runTTL(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ttl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, ttlUsage+"\n\nflags before the command:")
		fs.PrintDefaults()
	}
	cli.AddLogFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cli.ErrHelp
		}
		return cli.AsUsage(err)
	}
	rest := fs.Args()
	if len(rest) == 0 {
		fs.Usage()
		return cli.Usagef("ttl: missing command")
	}
	if rest[0] == "help" {
		fs.Usage()
		return cli.ErrHelp
	}
	c, ok := ttlCommands[rest[0]]
	if !ok {
		fs.Usage()
		return cli.Usagef("ttl: unknown command %q (want validate or advise)", rest[0])
	}
	var inherited []string
	fs.Visit(func(f *flag.Flag) { inherited = append(inherited, "--"+f.Name+"="+f.Value.String()) })
	return c(ctx, append(inherited, rest[1:]...), stdout, stderr)
}

func runTTLValidate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ttl validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o gapsweep.Options
	o.BindFlags(fs)
	asJSON := fs.Bool("json", false, "print the result as JSON")
	logf := cli.AddLogFlags(fs)
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if err := o.WithDefaults().Validate(); err != nil { // every option is a flag
		return cli.AsUsage(fmt.Errorf("ttl validate: %w", err))
	}
	s, err := gapsweep.New(o, nil)
	if err != nil {
		return fmt.Errorf("ttl validate: %w", err)
	}
	log := logf.Logger(stderr)
	log.Info("sweeping gaps", "target", o.Target, "debug", o.Debug, "model", o.Model)
	res, runErr := s.Run(ctx)
	if res != nil && (runErr == nil || len(res.Pairs) > 0) {
		if err := writeResult(stdout, res, *asJSON); err != nil {
			return errors.Join(runErr, err)
		}
	}
	if runErr != nil {
		return fmt.Errorf("ttl validate: %w", runErr)
	}
	log.Debug("sweep finished", "pairs", len(res.Pairs))
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
	fs := flag.NewFlagSet("ttl advise", flag.ContinueOnError)
	fs.SetOutput(stderr)
	debugURL := fs.String("debug-url", "", "router debug base URL (its debugAddr), e.g. http://127.0.0.1:9095 (required)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	logf := cli.AddLogFlags(fs)
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if *debugURL == "" {
		return cli.Usagef("ttl advise: want --debug-url")
	}
	a := gapsweep.DebugClient{Base: *debugURL}
	logf.Logger(stderr).Debug("reading the router's TTL report", "debug", *debugURL)
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
