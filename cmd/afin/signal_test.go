package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// SIGTERM to the real binary during an AFIN inference exits with status
// 130 (a scheduler's `timeout` used to have no effect for minutes). The
// task, far larger than a pipe's buffer, goes in on stdin: once the
// write returns, the binary is reading it, its signal handler is
// installed, and the signal lands in parsing, batch building or the
// forward pass, none of which ends on its own in minutes (K = 4097 tokens
// in d = 32). No clock is involved: were the signal not honoured, the run
// would go on until go test's -timeout.
func TestSIGTERMDuringAFINForward(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "afin")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	path, _ := blTaskFile(t, 1, "diag_gaussian", "lin_gaussian", 32, 4096)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 1<<20 {
		t.Fatalf("task is %d bytes, want more than a pipe holds", len(data))
	}
	cmd := exec.Command(bin, "infer", "--method", "afin", "--task", "-")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if _, err := stdin.Write(data); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit %v, want status 130", err)
	}
}
