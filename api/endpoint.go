package api

import (
	"fmt"
	"net"
	"strconv"
)

// ValidateEndpoint checks that ep is "ip:port" with a literal IP, as Envoy's
// ORIGINAL_DST cluster requires and as subjects and headers carry it.
func ValidateEndpoint(ep string) error {
	host, port, err := net.SplitHostPort(ep)
	if err != nil {
		return fmt.Errorf("endpoint %q: want ip:port: %w", ep, err)
	}
	if net.ParseIP(host) == nil {
		return fmt.Errorf("endpoint %q: host must be a literal IP address", ep)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("endpoint %q: port must be 1-65535", ep)
	}
	return nil
}
