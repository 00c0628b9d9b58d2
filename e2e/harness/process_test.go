package harness

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warmroute/warmroute/internal/testwait"
)

func TestProcessStop(t *testing.T) {
	tests := []struct {
		name     string
		script   string
		grace    time.Duration
		wantErr  error  // nil: Stop must succeed
		wantKill bool   // Stop must report a kill
		wantLog  string // must appear in the log; the script spells it split so
		// that the command line logged at start does not match it
	}{
		{name: "stops on SIGTERM", script: "echo sta''rted; exec sleep 30", wantLog: "started"},
		{name: "already exited", script: "echo b''ye; exit 3", wantErr: ErrExited, wantLog: "bye"},
		{name: "ignores SIGTERM", script: "trap '' TERM; echo stub''born; while :; do sleep 0.05; done",
			grace: 200 * time.Millisecond, wantKill: true, wantLog: "stubborn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Start("proc", t.TempDir(), "/bin/sh", "-c", tt.script)
			if err != nil {
				t.Fatal(err)
			}
			if tt.grace != 0 {
				p.grace = tt.grace
			}
			testwait.Until(t, 5*time.Second, func() string {
				if tail := p.Tail(20); !strings.Contains(tail, tt.wantLog) {
					return fmt.Sprintf("log never showed %q:\n%s", tt.wantLog, tail)
				}
				return ""
			})
			if tt.wantErr != nil {
				<-p.Exited()
			}
			err = p.Stop()
			switch {
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Fatalf("Stop() = %v, want %v", err, tt.wantErr)
			case tt.wantKill && (err == nil || !strings.Contains(err.Error(), "killed")):
				t.Fatalf("Stop() = %v, want a kill report", err)
			case tt.wantErr == nil && !tt.wantKill && err != nil:
				t.Fatalf("Stop() = %v", err)
			}
			select {
			case <-p.Exited():
			default:
				t.Fatal("process still running after Stop")
			}
		})
	}
}

func TestProcessStopTwice(t *testing.T) {
	p, err := Start("twice", t.TempDir(), "/bin/sh", "-c", "exec sleep 30")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("second Stop() = %v, want nil", err)
	}
	if p.ExitErr() == nil {
		t.Fatal("ExitErr() = nil after the process ended")
	}
}

func TestProcessLogAppends(t *testing.T) {
	dir := t.TempDir()
	for _, word := range []string{"first", "second"} {
		p, err := Start("same", dir, "/bin/sh", "-c", "echo "+word)
		if err != nil {
			t.Fatal(err)
		}
		<-p.Exited()
	}
	b, err := os.ReadFile(filepath.Join(dir, "same.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "first") || !strings.Contains(string(b), "second") {
		t.Fatalf("log lost a run:\n%s", b)
	}
}

func TestStartMissingBinary(t *testing.T) {
	if _, err := Start("missing", t.TempDir(), "/nonexistent/warmroute"); err == nil {
		t.Fatal("Start of a missing binary succeeded")
	}
}

func TestTailLines(t *testing.T) {
	tests := []struct {
		name string
		in   string
		n    int
		want string
	}{
		{"fewer lines than asked", "a\nb\n", 5, "a\nb"},
		{"exactly the tail", "a\nb\nc\n", 2, "b\nc"},
		{"no trailing newline", "a\nb\nc", 1, "c"},
		{"empty", "", 3, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tailLines([]byte(tt.in), tt.n); got != tt.want {
				t.Fatalf("tailLines(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
			}
		})
	}
}
