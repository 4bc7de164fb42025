//go:build !unix

package afin

import "time"

// processCPU is unavailable here: benchmarks report wall-clock rates only.
func processCPU() (time.Duration, bool) { return 0, false }
