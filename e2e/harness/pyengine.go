package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// PythonEnv names the environment variable that points at a Python with
// pyzmq and msgspec, instead of the project's .cache/interop-venv.
const PythonEnv = "WARMROUTE_PYTHON"

// interopVenv is the project-relative virtualenv the interop tests share.
const interopVenv = ".cache/interop-venv"

// PythonWithZMQ returns a Python interpreter that has pyzmq and msgspec:
// $WARMROUTE_PYTHON, or the project's .cache/interop-venv, created (from
// PyPI, log receiving pip's output) when missing.
func PythonWithZMQ(ctx context.Context, root string, log io.Writer) (string, error) {
	if p := os.Getenv(PythonEnv); p != "" {
		return p, nil
	}
	venv := filepath.Join(root, interopVenv)
	py := filepath.Join(venv, "bin", "python")
	if exec.CommandContext(ctx, py, "-c", "import zmq, msgspec").Run() == nil {
		return py, nil
	}
	for _, s := range [][]string{{"python3", "-m", "venv", venv},
		{py, "-m", "pip", "install", "-q", "pyzmq==27.3.0", "msgspec==0.23.0"}} {
		cmd := exec.CommandContext(ctx, s[0], s[1:]...)
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("setting up python with pyzmq and msgspec (%s): %w", s[0], err)
		}
	}
	return py, nil
}

// PyEngineOptions configures a PyEngine.
type PyEngineOptions struct {
	Name string // log name
	// Python is PythonWithZMQ's interpreter; Script is kv_engine.py
	// (PyEngineScript).
	Python, Script string
	// RelayListens makes the engine connect its PUB socket to PubPort,
	// where its relay listens (--zmq-listen), instead of binding it.
	RelayListens bool
	BlockSize    int // default 4
	DPRank       int
}

// PyEngineScript is kv_engine.py in the module at root.
func PyEngineScript(root string) string {
	return filepath.Join(root, "e2e", "harness", "testdata", "kv_engine.py")
}

// PyEngine is a vLLM-exact KV-event publisher (kv_engine.py: pyzmq and
// msgspec, as vLLM's ZmqEventPublisher) that keeps its true block set. It
// has no inference API: its HTTP address only answers /health. Restart
// keeps its ports. Methods must not run concurrently with each other.
type PyEngine struct {
	// Addr is its HTTP address (/health), also its endpoint in pools.
	Addr                            string
	PubPort, ReplayPort, HealthPort int
	BlockSize                       int
	opts                            PyEngineOptions
	logDir                          string

	mu   sync.Mutex
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
	done chan struct{}
}

// StartPyEngine picks ports and starts the engine.
func StartPyEngine(ctx context.Context, logDir string, o PyEngineOptions) (*PyEngine, error) {
	if o.BlockSize == 0 {
		o.BlockSize = 4
	}
	ports, err := FreePorts(3)
	if err != nil {
		return nil, err
	}
	e := &PyEngine{Addr: Addr(ports[2]), PubPort: ports[0], ReplayPort: ports[1], HealthPort: ports[2],
		BlockSize: o.BlockSize, opts: o, logDir: logDir}
	return e, e.Restart(ctx)
}

// EventsURL is the engine's PUB address (with RelayListens, the relay's).
func (e *PyEngine) EventsURL() string { return "tcp://" + Addr(e.PubPort) }

// ReplayURL is the engine's replay ROUTER address.
func (e *PyEngine) ReplayURL() string { return "tcp://" + Addr(e.ReplayPort) }

// HealthURL is the engine's /health.
func (e *PyEngine) HealthURL() string { return "http://" + e.Addr + "/health" }

// Restart starts a new engine process on the same ports (after Kill): an
// empty cache, a new hash seed, sequence numbers from 0.
func (e *PyEngine) Restart(ctx context.Context) error {
	args := []string{e.opts.Script, "--replay-port", strconv.Itoa(e.ReplayPort), "--health-port",
		strconv.Itoa(e.HealthPort), "--block-size", strconv.Itoa(e.opts.BlockSize), "--dp-rank", strconv.Itoa(e.opts.DPRank)}
	if e.opts.RelayListens {
		args = append(args, "--pub-connect", e.EventsURL())
	} else {
		args = append(args, "--pub-bind", strconv.Itoa(e.PubPort))
	}
	logf, err := os.OpenFile(filepath.Join(e.logDir, e.opts.Name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("starting %s: %w", e.opts.Name, err)
	}
	cmd := exec.Command(e.opts.Python, args...)
	cmd.Stderr = logf
	cmd.SysProcAttr = sysProcAttr()
	in, err := cmd.StdinPipe()
	if err != nil {
		logf.Close()
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return err
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("starting %s: %w", e.opts.Name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(done) }()
	e.mu.Lock()
	e.cmd, e.in, e.out, e.done = cmd, in, bufio.NewScanner(stdout), done
	e.mu.Unlock()
	e.out.Buffer(make([]byte, 1<<20), 64<<20)
	line, err := e.readLine(ctx)
	if err != nil || line != "ready" {
		e.Kill()
		return fmt.Errorf("starting %s: said %q: %v (see %s.log)", e.opts.Name, line, err, e.opts.Name)
	}
	ctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
	defer cancel()
	return WaitReady(ctx, e.HealthURL(), nil)
}

func (e *PyEngine) readLine(ctx context.Context) (string, error) {
	type res struct {
		line string
		ok   bool
	}
	ch := make(chan res, 1)
	go func() { ok := e.out.Scan(); ch <- res{e.out.Text(), ok} }()
	select {
	case r := <-ch:
		if !r.ok {
			return "", fmt.Errorf("%s: %w", e.opts.Name, ErrExited)
		}
		return r.line, nil
	case <-ctx.Done():
		return "", ctx.Err()
	case <-time.After(30 * time.Second):
		return "", fmt.Errorf("%s: no answer within 30s", e.opts.Name)
	}
}

// Do sends one command (see kv_engine.py) and returns its answer.
func (e *PyEngine) Do(command string) (string, error) {
	if _, err := fmt.Fprintln(e.in, command); err != nil {
		return "", fmt.Errorf("%s %q: %w", e.opts.Name, command, err)
	}
	line, err := e.readLine(context.Background())
	if err != nil {
		return "", fmt.Errorf("%s %q: %w", e.opts.Name, command, err)
	}
	if strings.HasPrefix(line, "error") {
		return "", fmt.Errorf("%s %q: %s", e.opts.Name, command, line)
	}
	return line, nil
}

// Truth is the engine's true block set.
type Truth struct {
	// Chains holds each cached chain's tokens, root first.
	Chains map[string][]uint32 `json:"chains"`
	Blocks int                 `json:"blocks"`
	Seq    int64               `json:"seq"` // last sequence number, -1 before any
}

// Truth asks the engine for its true block set.
func (e *PyEngine) Truth() (Truth, error) {
	var t Truth
	line, err := e.Do("truth")
	if err != nil {
		return t, err
	}
	if err := json.Unmarshal([]byte(line), &t); err != nil {
		return t, fmt.Errorf("decoding %s's truth: %w", e.opts.Name, err)
	}
	return t, nil
}

// Kill ends the engine with SIGKILL, as a crash would, and waits for it.
func (e *PyEngine) Kill() {
	e.mu.Lock()
	cmd, done := e.cmd, e.done
	e.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
}

// Close stops the engine (quit, then SIGKILL after a second).
func (e *PyEngine) Close() error {
	e.mu.Lock()
	in, done := e.in, e.done
	e.mu.Unlock()
	if in == nil {
		return nil
	}
	_, _ = fmt.Fprintln(in, "quit")
	select {
	case <-done:
		return nil
	case <-time.After(time.Second):
		e.Kill()
		return errors.New(e.opts.Name + " did not quit; killed")
	}
}
