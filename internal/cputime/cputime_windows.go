//go:build windows

package cputime

import (
	"fmt"

	"golang.org/x/sys/windows"
)

// Process is the user plus kernel CPU time of this process so far, in
// seconds.
func Process() (float64, error) {
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(windows.CurrentProcess(), &created, &exited, &kernel, &user); err != nil {
		return 0, fmt.Errorf("GetProcessTimes: %w", err)
	}
	return ticks(kernel) + ticks(user), nil
}

// ticks is a Filetime duration (100 ns units) in seconds.
func ticks(t windows.Filetime) float64 {
	return float64(uint64(t.HighDateTime)<<32|uint64(t.LowDateTime)) * 1e-7
}
