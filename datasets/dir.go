package datasets

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// EnvDataDir names the environment variable that points at the raw files
// (the CLI reads it and passes its value down as envValue).
const EnvDataDir = "AFIN_DATA_DIR"

// DataDir returns the directory the UCI raw files are read from and
// where that choice came from: flagValue (--data-dir) when set, else
// envValue ($AFIN_DATA_DIR), else BuiltIn, the copy built into the binary.
// It does not look at the disk.
func DataDir(flagValue, envValue string) (dir, source string) {
	switch {
	case flagValue != "":
		return flagValue, "--data-dir"
	case envValue != "":
		return envValue, "$" + EnvDataDir
	}
	return BuiltIn, "the default"
}

// FetchDir returns the directory `afin datasets fetch` writes to and where
// that choice came from: flagValue, else envValue, else <user cache
// dir>/afin/uci. The built-in copy cannot be written, so a fetch always
// names a directory on disk.
func FetchDir(flagValue, envValue string) (dir, source string, err error) {
	if flagValue != "" || envValue != "" {
		dir, source = DataDir(flagValue, envValue)
		return dir, source, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", "", fmt.Errorf("no directory to fetch into: --data-dir and $%s are unset and there is no user cache directory (%v)", EnvDataDir, err)
	}
	return filepath.Join(cache, "afin", "uci"), "the user cache directory", nil
}

// ErrNoData marks ResolveDir's errors and ReadTable's for a missing raw
// file: the data directory does not hold the raw files (a wrong
// --data-dir, $AFIN_DATA_DIR or $AFIN_OPENML_DIR), which the user fixes;
// the text says how.
var ErrNoData = errors.New("UCI raw files missing")

// noDataError gives err the ErrNoData mark without changing its text.
type noDataError struct{ err error }

func (e *noDataError) Error() string        { return e.err.Error() }
func (e *noDataError) Unwrap() error        { return e.err }
func (e *noDataError) Is(target error) bool { return target == ErrNoData }

// ResolveDir returns the data directory (see DataDir; BuiltIn for the
// copy built into the binary) after checking that it holds every task's
// raw file. The error, an ErrNoData, names the
// directory, where that choice came from, the missing files and how to
// get them.
func ResolveDir(flagValue, envValue string) (string, error) {
	dir, err := resolveDir(flagValue, envValue)
	if err != nil {
		return "", &noDataError{err}
	}
	return dir, nil
}

func resolveDir(flagValue, envValue string) (string, error) {
	dir, source := DataDir(flagValue, envValue)
	where := dir
	if dir == BuiltIn {
		where = builtInName("uci")
	}
	var missing []string
	for _, in := range List() {
		if err := statRaw(dir, "uci", in.Key, in.File); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				return "", fmt.Errorf("UCI data directory %s (from %s): %w", where, source, err)
			}
			missing = append(missing, filepath.Join(in.Key, in.File))
		}
	}
	switch {
	case len(missing) == len(List()):
		return "", fmt.Errorf("no UCI raw files in %s (from %s): %s", where, source, howToGet)
	case len(missing) > 0:
		return "", fmt.Errorf("UCI data directory %s (from %s) lacks %d of %d raw files (%s): %s",
			where, source, len(missing), len(List()), joinShort(missing, 3), howToGet)
	}
	return dir, nil
}

func joinShort(s []string, n int) string {
	out := ""
	for i, v := range s {
		if i == n {
			return out + fmt.Sprintf(", and %d more", len(s)-n)
		}
		if i > 0 {
			out += ", "
		}
		out += v
	}
	return out
}
