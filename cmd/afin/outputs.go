package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Outputs are checked before the work, so a long run never ends in "cannot
// write": each check returns bad input (exit 2) naming the flag, and
// leaves nothing behind (a probe file is removed at once).

// checkOutputFile checks that path can be created or overwritten as a
// file: its directory exists, is a directory and is writable.
func checkOutputFile(flagName, path string) error {
	if path == "" || path == "-" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil {
		if fi.IsDir() {
			return badInput(fmt.Errorf("%s: %s is a directory", flagName, path))
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return badInput(fmt.Errorf("%s: cannot write %s: %w", flagName, path, errors.Unwrap(err)))
		}
		return f.Close()
	}
	dir := filepath.Dir(path)
	anc, err := existingAncestor(flagName, dir)
	if err != nil {
		return err
	}
	if anc != dir {
		return badInput(fmt.Errorf("%s: directory %s does not exist", flagName, dir))
	}
	return probeDir(flagName, dir)
}

// checkOutputDir checks that path is, or can be created as, a writable
// directory.
func checkOutputDir(flagName, path string) error {
	if path == "" {
		return nil
	}
	anc, err := existingAncestor(flagName, path)
	if err != nil {
		return err
	}
	return probeDir(flagName, anc)
}

// checkFetchDir checks that path is a directory, or can be created as
// one. An existing one is not probed for writing: a fetch into a complete
// (perhaps read-only) directory writes nothing.
func checkFetchDir(flagName, path string) error {
	anc, err := existingAncestor(flagName, path)
	if err != nil || anc == filepath.Clean(path) {
		return err
	}
	return probeDir(flagName, anc)
}

// existingAncestor returns the nearest existing path at or above dir; it
// must be a directory.
func existingAncestor(flagName, dir string) (string, error) {
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		switch {
		case err == nil && !fi.IsDir():
			return "", badInput(fmt.Errorf("%s: %s is a file, not a directory", flagName, p))
		case err == nil:
			return p, nil
		case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return "", badInput(fmt.Errorf("%s: %s: %w", flagName, p, errors.Unwrap(err)))
		}
		if filepath.Dir(p) == p {
			return "", badInput(fmt.Errorf("%s: no existing directory above %s", flagName, dir))
		}
	}
}

// probeDir creates and removes a file in dir: permission bits alone do not
// tell (root, read-only mounts, ACLs).
func probeDir(flagName, dir string) error {
	f, err := os.CreateTemp(dir, ".afin-probe-*")
	if err != nil {
		return badInput(fmt.Errorf("%s: cannot write in %s: %w", flagName, dir, errors.Unwrap(err)))
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}
