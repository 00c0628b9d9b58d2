package harness

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// StopGrace is how long Stop waits after SIGTERM before it kills.
const StopGrace = 10 * time.Second

// Process is one child process whose stdout and stderr go to a log file.
// Its methods are safe for concurrent use. Create it with Start; the zero
// value is not usable.
type Process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{} // closed when the child has been reaped
	err     error         // the child's exit error; read only after done
	stopped bool          // Stop sent the signal; guarded by mu
	grace   time.Duration // SIGTERM to SIGKILL; StopGrace except in tests
	mu      sync.Mutex
}

// Start runs path with args. Output is appended to logDir/name.log, so a
// restarted process keeps one log.
func Start(name, logDir, path string, args ...string) (*Process, error) {
	logPath := filepath.Join(logDir, name+".log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	fmt.Fprintf(logf, "=== %s %s %q\n", time.Now().Format(time.RFC3339Nano), path, args)
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{}), grace: StopGrace}
	go p.reap(logf)
	return p, nil
}

func (p *Process) reap(logf *os.File) {
	p.err = p.cmd.Wait()
	fmt.Fprintf(logf, "=== %s exited: %v\n", time.Now().Format(time.RFC3339Nano), p.cmd.ProcessState)
	logf.Close()
	close(p.done)
}

// Pid returns the process id (of the latest start), for reading its
// /proc entries, such as the CPU time it used.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Name returns the name given to Start.
func (p *Process) Name() string { return p.name }

// LogPath returns the file holding the process's output.
func (p *Process) LogPath() string { return p.logPath }

// Exited is closed once the process has ended, for whatever reason.
func (p *Process) Exited() <-chan struct{} { return p.done }

// Stop sends SIGTERM, waits up to StopGrace, then kills. It returns nil when
// the process ended because of Stop, an error wrapping ErrExited when it had
// already ended on its own, or an error when it had to be killed. Calling it
// again returns the same kind of answer without signalling twice.
func (p *Process) Stop() error {
	p.mu.Lock()
	select {
	case <-p.done:
		stopped := p.stopped
		p.mu.Unlock()
		if stopped {
			return nil
		}
		return fmt.Errorf("%s: %w before it was stopped: %v", p.name, ErrExited, p.err)
	default:
	}
	first := !p.stopped
	p.stopped = true
	p.mu.Unlock()
	if first {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(p.grace):
		// The whole process group: a child that outlived SIGTERM too (a
		// vLLM engine's EngineCore and workers) must not outlive the test.
		// Every process starts as its group's leader (sysProcAttr).
		if syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) != nil {
			_ = p.cmd.Process.Kill()
		}
		<-p.done
		return fmt.Errorf("%s did not stop within %v of SIGTERM; killed with its process group", p.name, p.grace)
	}
}

// Kill ends the process with SIGKILL, as a crash would (no shutdown path
// runs), and waits for it. Like Stop, it counts as a stop the test asked for.
func (p *Process) Kill() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	_ = p.cmd.Process.Kill()
	<-p.done
}

// ExitErr returns how the process ended, or nil while it runs.
func (p *Process) ExitErr() error {
	select {
	case <-p.done:
		if p.err == nil {
			return fmt.Errorf("%s: %w with status 0", p.name, ErrExited)
		}
		return fmt.Errorf("%s: %w: %w", p.name, ErrExited, p.err)
	default:
		return nil
	}
}

// Tail returns at most the last n lines of the process's log.
func (p *Process) Tail(n int) string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(reading %s: %v)", p.logPath, err)
	}
	return tailLines(b, n)
}

func tailLines(b []byte, n int) string {
	b = bytes.TrimRight(b, "\n")
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' {
			if n--; n == 0 {
				return string(b[i+1:])
			}
		}
	}
	return string(b)
}
