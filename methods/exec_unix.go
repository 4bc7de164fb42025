//go:build unix

package methods

import (
	"os/exec"
	"syscall"
	"time"
)

// killGroup runs the command in its own process group and, on timeout,
// kills the whole group: a shell script's children (a sleeping or
// spinning sampler) would otherwise outlive it and keep its pipes open.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
}
