package harness

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/warmroute/warmroute/internal/testwait"
)

// TestStopKillsStubbornChildren: a process that ignores SIGTERM past its
// grace is killed with its whole process group, so a child that ignores
// SIGTERM too (an engine's worker) does not outlive the test.
func TestStopKillsStubbornChildren(t *testing.T) {
	script := `sh -c 'trap "" TERM; while :; do sleep 0.05; done' & echo chi''ld $!; trap '' TERM; while :; do sleep 0.05; done`
	p, err := Start("group", t.TempDir(), "/bin/sh", "-c", script)
	if err != nil {
		t.Fatal(err)
	}
	p.grace = 200 * time.Millisecond
	pidRE := regexp.MustCompile(`child (\d+)`)
	var child int
	testwait.Until(t, 5*time.Second, func() string {
		m := pidRE.FindStringSubmatch(p.Tail(20))
		if m == nil {
			return "the child's pid never showed in the log:\n" + p.Tail(20)
		}
		child, _ = strconv.Atoi(m[1])
		return ""
	})
	if err := p.Stop(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("Stop() = %v, want a kill report", err)
	}
	testwait.Until(t, 5*time.Second, func() string {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", child))
		if err != nil {
			return "" // gone
		}
		// A zombie waiting for init to reap it is dead too.
		if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) > 0 && f[0] == "Z" {
			return ""
		}
		return fmt.Sprintf("child %d still running after Stop: %s", child, b)
	})
}
