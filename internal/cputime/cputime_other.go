//go:build !unix && !windows

package cputime

import (
	"fmt"
	"runtime"
)

// Process reports that this system offers no process CPU time.
func Process() (float64, error) {
	return 0, fmt.Errorf("process CPU time is not available on %s", runtime.GOOS)
}
