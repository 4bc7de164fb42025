package datasets

import (
	"embed"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// The raw files of both suites are built into the binary, so `afin bench
// --suite uci|openml` runs from a clone or an installed binary with
// nothing beside it. They are the repository's datasets/uci and
// datasets/openml, byte for byte (a test checks them against SOURCES.md);
// a data directory (--data-dir, $AFIN_DATA_DIR, $AFIN_OPENML_DIR) replaces
// them, for example one `afin datasets fetch` refreshed from the sources.
//
//go:embed uci openml
var builtIn embed.FS

// BuiltIn is the data directory value that names the copy built into the
// binary: an empty string, what an unset flag and environment give.
const BuiltIn = ""

// builtInName is how messages name the built-in copy of a collection
// ("uci" or "openml").
func builtInName(collection string) string {
	return "the copy built into afin (the repository's datasets/" + collection + ")"
}

// rawPath names a raw file in messages: the path on disk, or the file's
// place in the built-in copy.
func rawPath(dir, collection, name, file string) string {
	if dir == BuiltIn {
		return path.Join("datasets", collection, name, file) + " (built into afin)"
	}
	return filepath.Join(dir, name, file)
}

// readRaw reads the raw file name/file of a collection under dir (BuiltIn:
// the embedded copy).
func readRaw(dir, collection, name, file string) ([]byte, error) {
	if dir == BuiltIn {
		return builtIn.ReadFile(path.Join(collection, name, file))
	}
	return os.ReadFile(filepath.Join(dir, name, file))
}

// statRaw reports whether that file is there; the error wraps
// fs.ErrNotExist when it is not.
func statRaw(dir, collection, name, file string) error {
	var err error
	if dir == BuiltIn {
		_, err = fs.Stat(builtIn, path.Join(collection, name, file))
	} else {
		_, err = os.Stat(filepath.Join(dir, name, file))
	}
	return err
}
