package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warmroute/warmroute/internal/cli"
)

// TestExitCodes runs the command line as main does and checks the exit status
// each path maps to: 0 for success and help, 2 for usage errors, 1 for
// failures found while running.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	invalid := filepath.Join(dir, "invalid.yaml")
	if err := os.WriteFile(invalid, []byte("ttl:\n  mode: sometimes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close() // a URL nothing answers
	bad := "127.0.0.1:99999"
	// Never the default listen addresses: another package's test may hold them.
	serveOK := []string{"serve", "--no-events", "--endpoints", "m=127.0.0.1:8000", "--admin-addr", "127.0.0.1:0", "--debug-addr", "127.0.0.1:0"}
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"no subcommand", nil, cli.ExitUsage},
		{"-h", []string{"-h"}, cli.ExitOK},
		{"--help", []string{"--help"}, cli.ExitOK},
		{"help", []string{"help"}, cli.ExitOK},
		{"help serve", []string{"help", "serve"}, cli.ExitOK},
		{"help unknown", []string{"help", "nope"}, cli.ExitUsage},
		{"version", []string{"version"}, cli.ExitOK},
		{"--version", []string{"--version"}, cli.ExitOK},
		{"version with arguments", []string{"version", "x"}, cli.ExitUsage},
		{"unknown subcommand", []string{"route"}, cli.ExitUsage},

		{"serve -h", []string{"serve", "-h"}, cli.ExitOK},
		{"serve --help", []string{"serve", "--help"}, cli.ExitOK},
		{"serve unknown flag", []string{"serve", "--bogus"}, cli.ExitUsage},
		{"serve flag value does not parse", []string{"serve", "--fallbacks", "many"}, cli.ExitUsage},
		{"serve bad --log-format", []string{"serve", "--log-format", "xml"}, cli.ExitUsage},
		{"serve bad --log-level", []string{"serve", "--log-level", "loud"}, cli.ExitUsage},
		{"serve stray argument", append(serveOK, "extra"), cli.ExitUsage},
		{"serve flag fails validation", append(serveOK, "--ttl-mode", "sometimes"), cli.ExitUsage},
		{"serve --tokenizer for no pool", append(serveOK, "--tokenizer", "other=/tmp"), cli.ExitUsage},
		{"serve config file missing", []string{"serve", "--config", filepath.Join(dir, "missing.yaml")}, cli.ExitFailure},
		{"serve config file fails validation", []string{"serve", "--config", invalid}, cli.ExitFailure},
		{"serve listen fails", append(serveOK, "--grpc-addr", bad), cli.ExitFailure},

		{"relay -h", []string{"relay", "-h"}, cli.ExitOK},
		{"relay unknown flag", []string{"relay", "--admin", ":9091"}, cli.ExitUsage},
		{"relay bad --log-level", []string{"relay", "--log-level", "loud"}, cli.ExitUsage},
		{"relay without --model", []string{"relay", "--endpoint-addr", "10.0.0.1:8000"}, cli.ExitUsage},
		{"relay stray argument", []string{"relay", "--model", "m", "--endpoint-addr", "10.0.0.1:8000", "x"}, cli.ExitUsage},
		{"relay admin listen fails", []string{"relay", "--model", "m", "--endpoint-addr", "10.0.0.1:8000",
			"--nats-url", "nats://" + down.Listener.Addr().String(), "--admin-addr", bad}, cli.ExitFailure},

		{"sim -h", []string{"sim", "-h"}, cli.ExitOK},
		{"sim bad --log-format", []string{"sim", "--log-format", "xml"}, cli.ExitUsage},
		{"sim invalid option", []string{"sim", "--max-running", "-1"}, cli.ExitUsage},
		{"sim stray argument", []string{"sim", "x"}, cli.ExitUsage},
		{"sim listen fails", []string{"sim", "--addr", bad}, cli.ExitFailure},

		{"ttl without command", []string{"ttl"}, cli.ExitUsage},
		{"ttl -h", []string{"ttl", "-h"}, cli.ExitOK},
		{"ttl unknown command", []string{"ttl", "tune"}, cli.ExitUsage},
		{"ttl advise -h", []string{"ttl", "advise", "-h"}, cli.ExitOK},
		{"ttl advise without --debug-url", []string{"ttl", "advise"}, cli.ExitUsage},
		{"ttl advise bad --log-level", []string{"ttl", "advise", "--log-level", "loud"}, cli.ExitUsage},
		{"ttl advise router down", []string{"ttl", "advise", "--debug-url", down.URL}, cli.ExitFailure},
		{"ttl bad --log-level before the command", []string{"ttl", "--log-level", "loud", "advise"}, cli.ExitUsage},
		{"ttl unknown flag before the command", []string{"ttl", "--json", "advise"}, cli.ExitUsage},
		{"ttl --log-format before the command", []string{"ttl", "--log-format", "json", "advise", "--debug-url", down.URL}, cli.ExitFailure},
		{"ttl validate --help", []string{"ttl", "validate", "--help"}, cli.ExitOK},
		{"ttl validate without --target-url", []string{"ttl", "validate", "--model", "m", "--block-size", "16", "--gaps", "10ms"}, cli.ExitUsage},
		{"ttl validate stray argument", []string{"ttl", "validate", "x"}, cli.ExitUsage},
		{"ttl validate router down", []string{"ttl", "validate", "--target-url", down.URL, "--debug-url", down.URL,
			"--model", "m", "--log-format", "json"}, cli.ExitFailure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var stdout, stderr bytes.Buffer
			err := run(ctx, tt.args, &stdout, &stderr)
			if ctx.Err() != nil {
				t.Fatalf("run did not fail by itself: %v", err)
			}
			if got := cli.ExitCode(err, &stderr); got != tt.want {
				t.Errorf("exit %d, want %d (err %v)\nstderr:\n%s", got, tt.want, err, stderr.String())
			}
		})
	}
}

func TestVersionPrintsBuild(t *testing.T) {
	for _, arg := range []string{"version", "--version", "-version"} {
		var stdout bytes.Buffer
		if err := run(context.Background(), []string{arg}, &stdout, &bytes.Buffer{}); err != nil {
			t.Fatalf("%s: %v", arg, err)
		}
		out := stdout.String()
		if !strings.HasPrefix(out, "warmroute ") || !strings.Contains(out, "revision") || !strings.Contains(out, "go1.") {
			t.Errorf("%s printed %q, want version, revision and Go version", arg, out)
		}
	}
}

func TestExitCodePrintsTheError(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		want    int
		wantOut string
	}{
		{"success", nil, cli.ExitOK, ""},
		{"help", cli.ErrHelp, cli.ExitOK, ""},
		{"usage", cli.Usagef("unknown subcommand %q", "x"), cli.ExitUsage, "warmroute: unknown subcommand \"x\"\n"},
		{"wrapped usage", errors.Join(errors.New("a"), cli.AsUsage(errors.New("b"))), cli.ExitUsage, "warmroute: a\nb\n"},
		{"runtime", errors.New("listening: refused"), cli.ExitFailure, "warmroute: listening: refused\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if got := cli.ExitCode(tt.err, &stderr); got != tt.want {
				t.Errorf("exit %d, want %d", got, tt.want)
			}
			if stderr.String() != tt.wantOut {
				t.Errorf("stderr %q, want %q", stderr.String(), tt.wantOut)
			}
		})
	}
}
