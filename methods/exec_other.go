//go:build !unix

package methods

import (
	"os/exec"
	"time"
)

// killGroup: without process groups, kill the command itself and stop
// waiting for its pipes shortly after.
func killGroup(cmd *exec.Cmd) { cmd.WaitDelay = 2 * time.Second }
