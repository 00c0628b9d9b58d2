package tests

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// The process tests' ports lie below the kernel's ephemeral range, where no
// outgoing connection of a concurrently running test can take them, and are
// distinct within one call.
func TestFreePortsBelowEphemeralRange(t *testing.T) {
	raw, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		t.Skipf("no ephemeral port range to compare with: %v", err)
	}
	fields := strings.Fields(string(raw))
	if len(fields) != 2 {
		t.Fatalf("ip_local_port_range %q", raw)
	}
	low, err := strconv.Atoi(fields[0])
	if err != nil {
		t.Fatal(err)
	}
	ports := freePorts(t, 32)
	seen := map[int]bool{}
	for _, p := range ports {
		if p >= low {
			t.Errorf("port %d is inside the ephemeral range (from %d)", p, low)
		}
		if seen[p] {
			t.Errorf("port %d returned twice", p)
		}
		seen[p] = true
	}
}
