//go:build windows

package records

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// Windows locks are mandatory for the bytes they cover, and the lock
// files carry the holder's plan and name for other processes to read, so
// the lock covers one byte far past any content instead of the file.
const (
	lockOffsetHigh = 0x7fffffff
	lockBytes      = 1
)

func lockRegion() *windows.Overlapped { return &windows.Overlapped{OffsetHigh: lockOffsetHigh} }

// flock locks f, shared or exclusive; without wait it returns errHeld at
// once when another open file holds a conflicting lock. Windows drops the
// lock when the handle closes or its process ends.
func flock(f *os.File, exclusive, wait bool) error {
	var flags uint32
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	if !wait {
		flags |= windows.LOCKFILE_FAIL_IMMEDIATELY
	}
	err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, lockBytes, 0, lockRegion())
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return errHeld
	}
	return err
}

// funlock drops the lock f holds.
func funlock(f *os.File) error {
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, lockBytes, 0, lockRegion())
}

// share turns the exclusive lock f holds into a shared one: unlock, then
// lock shared. Callers hold the registration lock, so no other writer
// can take the lock in between.
func share(f *os.File) error {
	if err := funlock(f); err != nil {
		return err
	}
	return flock(f, false, true)
}
