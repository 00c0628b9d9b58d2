package harness

import (
	"fmt"
	"math/rand/v2"
	"net"
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

// FreePorts returns n distinct TCP ports on 127.0.0.1 that were free a moment
// ago. All n listeners are held open together so no port is returned twice;
// another process may still take one before the caller binds it, which the
// caller sees as a start-up failure.
func FreePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := listenRandom()
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func listenRandom() (net.Listener, error) {
	var err error
	for range portTries {
		var l net.Listener
		if l, err = net.Listen("tcp", Addr(portLow+rand.IntN(portHigh-portLow))); err == nil {
			return l, nil
		}
	}
	return nil, fmt.Errorf("finding a free port in [%d, %d) after %d tries: %w", portLow, portHigh, portTries, err)
}

// Addr returns "127.0.0.1:port".
func Addr(port int) string { return fmt.Sprintf("127.0.0.1:%d", port) }
