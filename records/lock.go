package records

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// LockFile is the lock a writer of the results file name holds beside
// it. It is an flock, so the kernel releases it when the process dies: a
// stale file left by a killed run never blocks the next one. The lock is
// per results file, not per directory, because the shards of a suite
// (--shard I/N, a Slurm array) write their own files into one directory
// at the same time; two writers of one file are what must not happen.
func LockFile(name string) string { return "." + name + ".lock" }

// ErrLocked: another process is writing the same results file.
var ErrLocked = errors.New("results file is in use")

// lockFile takes the results file's writer lock without waiting: a
// second writer fails at once instead of running every unit again.
func lockFile(dir, name string) (*os.File, error) {
	path := filepath.Join(dir, LockFile(name))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("results lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, flockError(dir, name, err)
	}
	// Say who holds it, for the message of the next writer.
	host, _ := os.Hostname()
	f.Truncate(0)
	fmt.Fprintf(f, "pid %d on %s", os.Getpid(), host)
	return f, nil
}

// CheckUnlocked reports ErrLocked when another writer holds the results
// file's lock, without taking it and without creating anything: a run
// calls it first, so a second writer is refused at once, before the slow
// checks that precede OpenStore (which takes the lock for good).
func CheckUnlocked(dir, name string) error {
	path := filepath.Join(dir, LockFile(name))
	f, err := os.Open(path)
	if err != nil {
		return nil // no lock file (or none readable): OpenStore decides
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
		return flockError(dir, name, err)
	}
	return unix.Flock(int(f.Fd()), unix.LOCK_UN)
}

// flockError is the error of a failed flock on name's lock file.
func flockError(dir, name string, err error) error {
	path := filepath.Join(dir, LockFile(name))
	if errors.Is(err, unix.EWOULDBLOCK) {
		holder, _ := os.ReadFile(path)
		return fmt.Errorf("%w: %s in %s is being written by another afin bench (%s); wait for it or use another --results directory", ErrLocked, name, dir, holderText(holder))
	}
	return fmt.Errorf("results lock %s: %w", path, err)
}

func holderText(b []byte) string {
	if len(b) == 0 {
		return "pid unknown"
	}
	return string(b)
}
