//go:build !linux

package harness

import "syscall"

// sysProcAttr puts each child in its own process group, so a Ctrl-C in the
// demo's terminal reaches only the demo, which then stops the children.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
