//go:build unix

package cputime

import (
	"fmt"
	"syscall"
	"time"
)

// Process is the user plus system CPU time of this process so far, in
// seconds.
func Process() (float64, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds(), nil
}
