package harness

import (
	"fmt"
	"net"
)

// FreePorts returns n distinct TCP ports on 127.0.0.1 that were free a moment
// ago. All n listeners are held open together so the kernel cannot hand out
// the same port twice; another process may still take one before the caller
// binds it, which the caller sees as a start-up failure.
func FreePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Addr returns "127.0.0.1:port".
func Addr(port int) string { return fmt.Sprintf("127.0.0.1:%d", port) }
