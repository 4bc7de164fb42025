// Package atomicfile writes a file so that a reader, or the next run after
// a crash, sees either its old content or the complete new one, never a
// torn file: through a temporary file beside it, synced, then renamed over
// it (a rename within one directory is atomic on Unix and Windows).
package atomicfile

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Perm is the mode of the files written: results, caches and checkpoints
// are meant to be read by others.
const Perm = 0o644

// Write writes path with what write puts into its writer. On an error
// path is left as it was and the temporary file is removed.
func Write(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	// CreateTemp makes the file private (0600).
	err = tmp.Chmod(Perm)
	if err == nil {
		err = write(tmp)
	}
	if err == nil {
		// Without the sync, a crash soon after the rename can leave an
		// empty file under the new name.
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// WriteFile writes data to path as Write does.
func WriteFile(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := io.Copy(w, bytes.NewReader(data))
		return err
	})
}

// DirPerm is the mode of the directories WriteDir creates.
const DirPerm = 0o755

// WriteDir creates directory out, which must not exist, with what fill
// writes into a temporary directory beside it, renamed to out once
// complete: out appears whole or not at all. On an error nothing is left.
// When another process creates out meanwhile, the rename fails and out
// is theirs.
func WriteDir(out string, fill func(tmp string) error) error {
	if _, err := os.Stat(out); err == nil {
		return fmt.Errorf("%s: %w", out, fs.ErrExist)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(out)), "."+filepath.Base(out)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	err = fill(tmp)
	if err == nil {
		// MkdirTemp makes the directory private (0700).
		err = os.Chmod(tmp, DirPerm)
	}
	if err == nil {
		err = os.Rename(tmp, out)
	}
	if err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("writing %s: %w", out, err)
	}
	return nil
}
