//go:build !(unix && !aix) && !windows

package records

import (
	"fmt"
	"os"
	"runtime"
)

// Without file locks a second writer could not be refused, so no writer
// is let in.
func flock(*os.File, bool, bool) error {
	return fmt.Errorf("file locks are not implemented on %s", runtime.GOOS)
}

func funlock(*os.File) error { return nil }

func share(*os.File) error { return flock(nil, false, false) }
