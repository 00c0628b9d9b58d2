package harness

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// BuildNATSD compiles the module's ./e2e/natsd (a NATS server as its own
// process) into dir and returns the binary's path.
func BuildNATSD(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "natsd")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./e2e/natsd")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building natsd: %w\n%s", err, out)
	}
	return bin, nil
}

// NATS is a NATS server running as its own process, made by StartNATS, so a
// test can kill and restart it. Restart replaces the embedded Process and
// must not run concurrently with other uses.
type NATS struct {
	Addr string // "127.0.0.1:port"
	// JetStreamDir is the file store ("" without JetStream); it survives a
	// Restart, as a real server's volume would.
	JetStreamDir string
	// ConfigFile is a nats-server configuration file (authorization, tls)
	// the server runs with; "" for none.
	ConfigFile  string
	bin, logDir string
	name        string // log name; "" is "nats"
	*Process
}

// URL is the client URL relays and routers connect to.
func (n *NATS) URL() string { return "nats://" + n.Addr }

// StartNATS starts natsd (BuildNATSD) on port, with JetStream stored in
// jetStreamDir when it is not empty, and waits until it greets clients.
func StartNATS(ctx context.Context, bin, logDir string, port int, jetStreamDir string) (*NATS, error) {
	return StartNATSConfig(ctx, bin, logDir, port, jetStreamDir, "")
}

// StartNATSConfig is StartNATS with a nats-server configuration file.
func StartNATSConfig(ctx context.Context, bin, logDir string, port int, jetStreamDir, configFile string) (*NATS, error) {
	n := &NATS{Addr: Addr(port), JetStreamDir: jetStreamDir, ConfigFile: configFile, bin: bin, logDir: logDir}
	if err := n.Restart(ctx); err != nil {
		return nil, err
	}
	return n, nil
}

// Restart starts the server again on the same port and store (after Stop)
// and waits until it is ready.
func (n *NATS) Restart(ctx context.Context) error {
	args := []string{"-addr", n.Addr}
	if n.JetStreamDir != "" {
		args = append(args, "-jetstream-dir", n.JetStreamDir)
	}
	if n.ConfigFile != "" {
		args = append(args, "-config", n.ConfigFile)
	}
	name := n.name
	if name == "" {
		name = "nats"
	}
	p, err := Start(name, n.logDir, n.bin, args...)
	if err != nil {
		return err
	}
	n.Process = p
	ctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
	defer cancel()
	if err := waitGreeting(ctx, n.Addr, p); err != nil {
		_ = p.Stop()
		return fmt.Errorf("starting nats: %w\n--- %s ---\n%s", err, p.LogPath(), p.Tail(20))
	}
	return nil
}

// waitGreeting polls addr until a NATS server answers with its INFO line,
// giving up when p exits or ctx ends.
func waitGreeting(ctx context.Context, addr string, p *Process) error {
	last := "no probe yet"
	for {
		ok, why := greets(addr)
		if ok {
			return nil
		}
		last = why
		select {
		case <-p.Exited():
			return fmt.Errorf("waiting for nats on %s: %w (last probe: %s)", addr, p.ExitErr(), last)
		case <-ctx.Done():
			return fmt.Errorf("waiting for nats on %s: %w: %w (last probe: %s)", addr, ErrNotReady, ctx.Err(), last)
		case <-time.After(pollInterval):
		}
	}
}

func greets(addr string) (bool, string) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false, err.Error()
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return false, err.Error()
	}
	return strings.HasPrefix(line, "INFO "), "greeting " + fmt.Sprintf("%.20q", line)
}
