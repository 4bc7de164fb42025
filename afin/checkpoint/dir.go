package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/afin-bench/afin/internal/atomicfile"
)

// WriteNewDir creates out, which must not exist, with what fill writes,
// so out appears complete or not at all.
func WriteNewDir(out string, fill func(tmp string) error) error {
	if _, err := os.Stat(out); err == nil {
		return fmt.Errorf("afin: %s already exists", out)
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Clean(out)), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteDir(out, fill)
}

// CopyFile copies src to dst atomically; a missing src copies nothing.
func CopyFile(src, dst string) error {
	in, err := os.Open(src)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer in.Close()
	return atomicfile.Write(dst, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}
