package main

import (
	"errors"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// SIGTERM to the real binary during an AFIN forward pass: it exits within
// a second (a scheduler's `timeout` used to have no effect for minutes).
func TestSIGTERMDuringAFINForward(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "afin")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	task, _ := blTaskFile(t, 1, "diag_gaussian", "lin_gaussian", 32, 1024)
	cmd := exec.Command(bin, "infer", "--method", "afin", "--task", task)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		t.Skip("the forward pass finished before the signal: nothing to interrupt on this machine")
	case <-time.After(1500 * time.Millisecond):
	}
	cmd.Process.Signal(syscall.SIGTERM)
	sent := time.Now()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Errorf("exit %v, want status 130", err)
		}
		if lag := time.Since(sent); lag > time.Second {
			t.Errorf("exited %v after SIGTERM, want within a second", lag)
		}
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		t.Fatal("still running 5 s after SIGTERM")
	}
}
