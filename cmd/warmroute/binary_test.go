package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBinaryExitStatus builds the binary with a release version stamped in
// and checks what a shell sees: exit statuses, the version, JSON logs.
func TestBinaryExitStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "warmroute")
	build := exec.Command("go", "build", "-o", bin,
		"-ldflags", "-X github.com/warmroute/warmroute/buildinfo.version=v9.8.7-test", ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	tests := []struct {
		name       string
		args       []string
		want       int
		wantStdout string
		wantStderr string
	}{
		{"-h", []string{"-h"}, 0, "", "usage: warmroute"},
		{"serve --help", []string{"serve", "--help"}, 0, "", "-admin-addr"},
		{"--version", []string{"--version"}, 0, "warmroute v9.8.7-test (revision ", ""},
		{"bad flag", []string{"serve", "--admin", ":9090"}, 2, "", "flag provided but not defined: -admin"},
		{"unknown subcommand", []string{"route"}, 2, "", `unknown subcommand "route"`},
		{"runtime failure", []string{"ttl", "advise", "--debug-url", down.URL}, 1, "", "ttl advise: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			cmd := exec.Command(bin, tt.args...)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			got := 0
			if err := cmd.Run(); err != nil {
				var ee *exec.ExitError
				if !errors.As(err, &ee) {
					t.Fatalf("running: %v", err)
				}
				got = ee.ExitCode()
			}
			if got != tt.want {
				t.Errorf("exit %d, want %d\nstderr:\n%s", got, tt.want, stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.wantStdout) || !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stdout %q, stderr %q; want them to contain %q and %q",
					stdout.String(), stderr.String(), tt.wantStdout, tt.wantStderr)
			}
		})
	}
	t.Run("serve logs JSON and stops on SIGTERM", func(t *testing.T) {
		cmd := exec.Command(bin, "serve", "--no-events", "--endpoints", "m=127.0.0.1:8000",
			"--grpc-addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0", "--debug-addr", "127.0.0.1:0", "--log-format", "json")
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- waitForJSONLine(stderr, "warmroute listening") }()
		select {
		case err := <-done:
			if err != nil {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatal(err)
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("no JSON \"warmroute listening\" line within 30s")
		}
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("serve after SIGTERM: %v, want exit 0", err)
		}
	})
}

// waitForJSONLine reads JSON log lines until one has message msg; every line
// before it must be JSON too. It drains the rest so the process never blocks.
func waitForJSONLine(r interface{ Read([]byte) (int, error) }, msg string) error {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var rec struct{ Msg string }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return errors.New("not a JSON log line: " + sc.Text())
		}
		if rec.Msg == msg {
			go func() {
				for sc.Scan() {
				}
			}()
			return nil
		}
	}
	return errors.New("stderr ended before " + msg)
}
