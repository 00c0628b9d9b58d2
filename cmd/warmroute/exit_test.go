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
	serveOK := []string{"serve", "--no-events", "--endpoints", "m=127.0.0.1:8000"}
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"no subcommand", nil, exitUsage},
		{"-h", []string{"-h"}, exitOK},
		{"--help", []string{"--help"}, exitOK},
		{"help", []string{"help"}, exitOK},
		{"help serve", []string{"help", "serve"}, exitOK},
		{"help unknown", []string{"help", "nope"}, exitUsage},
		{"version", []string{"version"}, exitOK},
		{"--version", []string{"--version"}, exitOK},
		{"version with arguments", []string{"version", "x"}, exitUsage},
		{"unknown subcommand", []string{"route"}, exitUsage},

		{"serve -h", []string{"serve", "-h"}, exitOK},
		{"serve --help", []string{"serve", "--help"}, exitOK},
		{"serve unknown flag", []string{"serve", "--bogus"}, exitUsage},
		{"serve flag value does not parse", []string{"serve", "--fallbacks", "many"}, exitUsage},
		{"serve bad --log-format", []string{"serve", "--log-format", "xml"}, exitUsage},
		{"serve bad --log-level", []string{"serve", "--log-level", "loud"}, exitUsage},
		{"serve stray argument", append(serveOK, "extra"), exitUsage},
		{"serve flag fails validation", append(serveOK, "--ttl-mode", "sometimes"), exitUsage},
		{"serve --tokenizer for no pool", append(serveOK, "--tokenizer", "other=/tmp"), exitUsage},
		{"serve config file missing", []string{"serve", "--config", filepath.Join(dir, "missing.yaml")}, exitFailure},
		{"serve config file fails validation", []string{"serve", "--config", invalid}, exitFailure},
		{"serve listen fails", append(serveOK, "--grpc-addr", bad), exitFailure},

		{"relay -h", []string{"relay", "-h"}, exitOK},
		{"relay unknown flag", []string{"relay", "--admin", ":9091"}, exitUsage},
		{"relay bad --log-level", []string{"relay", "--log-level", "loud"}, exitUsage},
		{"relay without --model", []string{"relay", "--endpoint-addr", "10.0.0.1:8000"}, exitUsage},
		{"relay stray argument", []string{"relay", "--model", "m", "--endpoint-addr", "10.0.0.1:8000", "x"}, exitUsage},
		{"relay admin listen fails", []string{"relay", "--model", "m", "--endpoint-addr", "10.0.0.1:8000",
			"--nats-url", "nats://" + down.Listener.Addr().String(), "--admin-addr", bad}, exitFailure},

		{"sim -h", []string{"sim", "-h"}, exitOK},
		{"sim bad --log-format", []string{"sim", "--log-format", "xml"}, exitUsage},
		{"sim invalid option", []string{"sim", "--max-running", "-1"}, exitUsage},
		{"sim stray argument", []string{"sim", "x"}, exitUsage},
		{"sim listen fails", []string{"sim", "--addr", bad}, exitFailure},

		{"ttl without command", []string{"ttl"}, exitUsage},
		{"ttl -h", []string{"ttl", "-h"}, exitOK},
		{"ttl unknown command", []string{"ttl", "tune"}, exitUsage},
		{"ttl advise -h", []string{"ttl", "advise", "-h"}, exitOK},
		{"ttl advise without --admin-url", []string{"ttl", "advise"}, exitUsage},
		{"ttl advise bad --log-level", []string{"ttl", "advise", "--log-level", "loud"}, exitUsage},
		{"ttl advise router down", []string{"ttl", "advise", "--admin-url", down.URL}, exitFailure},
		{"ttl bad --log-level before the command", []string{"ttl", "--log-level", "loud", "advise"}, exitUsage},
		{"ttl unknown flag before the command", []string{"ttl", "--json", "advise"}, exitUsage},
		{"ttl --log-format before the command", []string{"ttl", "--log-format", "json", "advise", "--admin-url", down.URL}, exitFailure},
		{"ttl validate --help", []string{"ttl", "validate", "--help"}, exitOK},
		{"ttl validate without --target-url", []string{"ttl", "validate", "--model", "m", "--block-size", "16", "--gaps", "10ms"}, exitUsage},
		{"ttl validate stray argument", []string{"ttl", "validate", "x"}, exitUsage},
		{"ttl validate router down", []string{"ttl", "validate", "--target-url", down.URL, "--admin-url", down.URL,
			"--model", "m", "--log-format", "json"}, exitFailure},
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
			if got := exitCode(err, &stderr); got != tt.want {
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
		{"success", nil, exitOK, ""},
		{"help", errHelp, exitOK, ""},
		{"usage", usageErrorf("unknown subcommand %q", "x"), exitUsage, "warmroute: unknown subcommand \"x\"\n"},
		{"wrapped usage", errors.Join(errors.New("a"), asUsage(errors.New("b"))), exitUsage, "warmroute: a\nb\n"},
		{"runtime", errors.New("listening: refused"), exitFailure, "warmroute: listening: refused\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if got := exitCode(tt.err, &stderr); got != tt.want {
				t.Errorf("exit %d, want %d", got, tt.want)
			}
			if stderr.String() != tt.wantOut {
				t.Errorf("stderr %q, want %q", stderr.String(), tt.wantOut)
			}
		})
	}
}
