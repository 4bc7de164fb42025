//go:build unix && !aix

package records

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// flock locks f, shared or exclusive; without wait it returns errHeld at
// once when another open file holds a conflicting lock. The kernel drops
// a flock when its descriptor closes, so a killed writer leaves no lock.
func flock(f *os.File, exclusive, wait bool) error {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	if !wait {
		how |= unix.LOCK_NB
	}
	err := unix.Flock(int(f.Fd()), how)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return errHeld
	}
	return err
}

// funlock drops the lock f holds.
func funlock(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_UN) }

// share turns the exclusive lock f holds into a shared one. The
// conversion is not atomic; callers hold the registration lock, so no
// other writer can take the lock in between.
func share(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_SH) }
