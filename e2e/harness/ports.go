package harness

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

// Ports are drawn below Linux's default ephemeral range (32768-60999): the
// kernel hands ports from that range to outgoing connections, and with
// Envoy, NATS and HTTP clients busy a port found free there is often taken
// by a connection before the process that was meant to bind it starts.
const (
	portLow   = 15000
	portHigh  = 32000
	portTries = 200
)

// ledger remembers every port handed out, so a port is never returned twice
// in one test process and never to two test processes at once. Checking that
// a port can be bound is not enough: FreePorts closes its listeners before
// the caller's process binds them, and a second call in between (another
// component of the same stack, a parallel test) could draw the same port.
// Across processes (go test runs packages side by side) each port is claimed
// by an exclusive flock on a file named after it, held until the process
// exits; the kernel drops the lock then, so a crashed test leaves nothing
// stale behind.
var ledger = struct {
	sync.Mutex
	given map[int]bool
	files []*os.File // held open: closing one would release its claim
}{given: map[int]bool{}}

// portClaimDir is where the per-port lock files live.
func portClaimDir() string { return filepath.Join(os.TempDir(), "warmroute-test-ports") }

// claim records port as handed out by this process; it reports false when
// this process already handed it out or another process holds its claim.
// The caller holds ledger's lock.
func claim(port int) (bool, error) {
	if ledger.given[port] {
		return false, nil
	}
	dir := portClaimDir()
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return false, fmt.Errorf("claiming test ports: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)), os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return false, fmt.Errorf("claiming test port %d: %w", port, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return false, nil // another test process has it
		}
		return false, fmt.Errorf("claiming test port %d: %w", port, err)
	}
	ledger.given[port] = true
	ledger.files = append(ledger.files, f)
	return true, nil
}

// FreePorts returns n distinct TCP ports on 127.0.0.1 that were free a moment
// ago and that no earlier call, in this process or in another test process
// still running, returned. Another program may still take one before the
// caller binds it, which the caller sees as a start-up failure.
func FreePorts(n int) ([]int, error) {
	ledger.Lock()
	defer ledger.Unlock()
	ports := make([]int, 0, n)
	for range n {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		ports = append(ports, p)
	}
	return ports, nil
}

func freePort() (int, error) {
	var err error
	for range portTries {
		port := portLow + rand.IntN(portHigh-portLow)
		ok, cerr := claim(port)
		if cerr != nil {
			return 0, cerr
		}
		if !ok {
			continue
		}
		var l net.Listener
		if l, err = net.Listen("tcp", Addr(port)); err == nil {
			l.Close()
			return port, nil
		}
		// Claimed but in use by something else: the claim stays, so the
		// port is not tried again.
	}
	return 0, fmt.Errorf("finding a free port in [%d, %d) after %d tries: %v", portLow, portHigh, portTries, err)
}

// Addr returns "127.0.0.1:port".
func Addr(port int) string { return fmt.Sprintf("127.0.0.1:%d", port) }
