package harness

import "syscall"

// sysProcAttr puts each child in its own process group, so a Ctrl-C in the
// demo's terminal reaches only the demo (which then stops the children in
// order), and asks the kernel to kill the child if the harness dies first,
// so no simulator or Envoy outlives a crashed test.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
