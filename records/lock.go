package records

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// LockFile is the lock a writer holds in a results directory. It is an
// flock, so the kernel releases it when the process dies: a stale file
// left by a killed run never blocks the next one.
const LockFile = ".afin.lock"

// ErrLocked: another process is writing into the results directory.
var ErrLocked = errors.New("results directory is in use")

// lockDir takes the directory's writer lock without waiting: a second
// writer fails at once instead of running every unit again.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("results lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			holder, _ := os.ReadFile(path)
			return nil, fmt.Errorf("%w: %s is locked by another afin bench (%s); wait for it or use another --results directory", ErrLocked, dir, holderText(holder))
		}
		return nil, fmt.Errorf("results lock %s: %w", path, err)
	}
	// Say who holds it, for the message of the next writer.
	host, _ := os.Hostname()
	f.Truncate(0)
	fmt.Fprintf(f, "pid %d on %s", os.Getpid(), host)
	return f, nil
}

func holderText(b []byte) string {
	if len(b) == 0 {
		return "pid unknown"
	}
	return string(b)
}
