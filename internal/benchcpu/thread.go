package benchcpu

import (
	"time"

	"golang.org/x/sys/unix"
)

// ThreadNow returns the CPU time the calling OS thread has used. A benchmark
// that pins its goroutine (runtime.LockOSThread) can time one operation's
// own CPU with it: unlike wall time, it leaves out the time other processes
// held the core, and unlike process CPU it leaves out other threads (the
// garbage collector's background workers); GC assists the operation made are
// counted.
func ThreadNow() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
