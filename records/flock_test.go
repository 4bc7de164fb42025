package records

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestFlock checks the lock primitives the directory lock is built on,
// between two open files of one lock file (as two processes would hold
// them): exclusive excludes all, shared admits shared, share turns an
// exclusive lock into a shared one, and unlocking or closing frees it.
func TestFlock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	open := func() *os.File {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b := open(), open()
	try := func(step string, f *os.File, exclusive bool, wantHeld bool) {
		t.Helper()
		err := flock(f, exclusive, false)
		if held := errors.Is(err, errHeld); held != wantHeld || (err != nil && !held) {
			t.Fatalf("%s: err %v, want held=%v", step, err, wantHeld)
		}
	}
	try("a exclusive", a, true, false)
	try("b exclusive while a holds exclusive", b, true, true)
	try("b shared while a holds exclusive", b, false, true)
	// The lock file stays readable and writable while locked: the holder's
	// plan is read from it.
	if _, err := a.WriteAt([]byte("plan"), 0); err != nil {
		t.Fatalf("writing a locked file: %v", err)
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != "plan" {
		t.Fatalf("reading a locked file: %q, %v", got, err)
	}
	if err := share(a); err != nil {
		t.Fatal(err)
	}
	try("b shared while a holds shared", b, false, false)
	if err := funlock(b); err != nil {
		t.Fatal(err)
	}
	try("b exclusive while a holds shared", b, true, true)
	if err := funlock(a); err != nil {
		t.Fatal(err)
	}
	try("b exclusive once a unlocked", b, true, false)
	b.Close()
	try("a exclusive once b closed", a, true, false)
}
