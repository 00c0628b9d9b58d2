package harness

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestFreePorts(t *testing.T) {
	ports, err := FreePorts(8)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p < portLow || p >= portHigh || seen[p] {
			t.Fatalf("FreePorts returned %v: want 8 distinct ports in [%d, %d)", ports, portLow, portHigh)
		}
		seen[p] = true
	}
}

// Ports from separate calls never repeat: a stack draws its components'
// ports in several calls, and the listeners of one call are closed before
// the next.
func TestFreePortsNeverRepeatInAProcess(t *testing.T) {
	seen := map[int]bool{}
	for call := range 50 {
		ports, err := FreePorts(8)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ports {
			if seen[p] {
				t.Fatalf("call %d returned port %d again", call, p)
			}
			seen[p] = true
		}
	}
}

// A port another process has claimed is not handed out.
func TestClaimRespectsAnotherHoldersLock(t *testing.T) {
	ledger.Lock()
	defer ledger.Unlock()
	port := portLow
	for ledger.given[port] {
		port++
	}
	if err := os.MkdirAll(portClaimDir(), 0o777); err != nil {
		t.Fatal(err)
	}
	// A separate open file description locks like another process does.
	f, err := os.OpenFile(filepath.Join(portClaimDir(), strconv.Itoa(port)), os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		t.Skipf("port %d is claimed by another test process: %v", port, err)
	}
	if ok, err := claim(port); err != nil || ok {
		t.Fatalf("claim(%d) while another holder locks it = %v, %v; want false, nil", port, ok, err)
	}
	f.Close() // releases the other holder's lock
	if ok, err := claim(port); err != nil || !ok {
		t.Fatalf("claim(%d) once released = %v, %v; want true, nil", port, ok, err)
	}
	if ok, _ := claim(port); ok {
		t.Fatalf("claim(%d) a second time succeeded", port)
	}
}

const childPortsEnv = "WARMROUTE_HARNESS_PORTS_CHILD"

// Two test processes drawing ports at the same time get disjoint sets: the
// parent holds its ports while a child process (this test binary) draws as
// many. Without the cross-process claims 400 + 400 draws from 17,000 ports
// collide with probability above 99.99 %.
func TestFreePortsDisjointAcrossProcesses(t *testing.T) {
	if os.Getenv(childPortsEnv) != "" {
		ports, err := FreePorts(400)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ports {
			os.Stdout.WriteString("port " + strconv.Itoa(p) + "\n")
		}
		return
	}
	mine, err := FreePorts(400)
	if err != nil {
		t.Fatal(err)
	}
	held := map[int]bool{}
	for _, p := range mine {
		held[p] = true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFreePortsDisjointAcrossProcesses$", "-test.count=1")
	cmd.Env = append(os.Environ(), childPortsEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	n := 0
	for line := range strings.Lines(string(out)) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "port ")
		if !ok {
			continue
		}
		p, err := strconv.Atoi(rest)
		if err != nil {
			t.Fatalf("child printed %q", line)
		}
		n++
		if held[p] {
			t.Errorf("child drew port %d, which this process holds", p)
		}
	}
	if n != 400 {
		t.Fatalf("child printed %d ports, want 400:\n%s", n, out)
	}
}
