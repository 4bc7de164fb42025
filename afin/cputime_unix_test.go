//go:build unix

package afin

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user + system) this process has used, so
// a benchmark on a loaded machine can report throughput per CPU second
// beside wall-clock throughput.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
